/* validate-pool.c: validate's worker processes (validate-pool.h). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <sys/wait.h>

#include "process.h"
#include "strbuf.h"
#include "util.h"
#include "validate-pool.h"
#include "banned.h"

/* The most a worker may send for one item: more is taken for a worker
 * gone wrong. */
#define RESULT_MAX ((size_t)4 << 20)

#define JOBS_MAX 64

/* A worker process: it reads item indices (8 bytes each) on cmd, and
 * answers each with the result's length (8 bytes) and its JSON on res. */
struct worker {
        pid_t pid;
        int cmd, res;
        bool busy;
        size_t item;
        struct strbuf in;
};

struct pool {
        size_t n;
        const struct validate_pool_ops *ops;
        void *userdata;
        json_t **results;
        struct worker *workers;
        size_t n_workers;
};

static bool write_all(int fd, const void *buf, size_t len)
{
        for (size_t off = 0; off < len;) {
                ssize_t n = write(fd, (const char *)buf + off, len - off);

                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        return false;
                off += (size_t)n;
        }
        return true;
}

_noreturn_ static void worker_main(const struct pool *p, int cmd, int res)
{
        uint64_t i;

        signal(SIGPIPE, SIG_DFL);
        for (;;) {
                ssize_t n = read(cmd, &i, sizeof(i));
                _cleanup_free_ char *text = NULL;
                uint64_t len;
                json_t *r;

                if (n < 0 && errno == EINTR)
                        continue;
                if (n != (ssize_t)sizeof(i) || i >= p->n)
                        _exit(0);
                r = p->ops->work(i, p->userdata);
                text = json_dumps(r, JSON_COMPACT);
                json_decref(r);
                len = text ? strlen(text) : 0;
                if (!write_all(res, &len, sizeof(len)) || !write_all(res, text, len))
                        _exit(1);
        }
}

/* Start worker k; the others' pipes are closed in it, so that each worker
 * sees the end of its own cmd when the parent closes it. */
static int worker_start(struct pool *p, size_t k)
{
        struct worker *w = p->workers;
        int cmd[2], res[2];
        pid_t pid;

        if (pipe2(cmd, O_CLOEXEC) < 0)
                return -errno;
        if (pipe2(res, O_CLOEXEC) < 0) {
                int e = -errno;

                close(cmd[0]), close(cmd[1]);
                return e;
        }
        fflush(NULL);
        pid = fork();
        if (pid == 0) {
                for (size_t j = 0; j < p->n_workers; j++)
                        if (j != k && w[j].pid > 0) {
                                close(w[j].cmd);
                                close(w[j].res);
                        }
                close(cmd[1]);
                close(res[0]);
                worker_main(p, cmd[0], res[1]);
        }
        close(cmd[0]);
        close(res[1]);
        if (pid < 0) {
                int e = -errno;

                close(cmd[1]), close(res[0]);
                return e;
        }
        w[k] = (struct worker){ .pid = pid, .cmd = cmd[1], .res = res[0], .in = STRBUF_INIT };
        return 0;
}

static void worker_stop(struct worker *w, int *status)
{
        close(w->cmd);
        close(w->res);
        while (waitpid(w->pid, status, 0) < 0 && errno == EINTR)
                ;
        strbuf_release(&w->in);
        w->pid = 0;
        w->busy = false;
}

/* Worker k's item died with it: its result says how; a new worker takes
 * its place. */
static void worker_died(struct pool *p, size_t k)
{
        struct worker *w = &p->workers[k];
        _cleanup_free_ char *why = NULL;
        size_t item = w->item;
        int status = 0;

        worker_stop(w, &status);
        why = wait_status_string(status);
        p->results[item] = p->ops->lost(item, why, p->userdata);
        (void)worker_start(p, k);
}

enum worker_state { WORKER_BUSY, WORKER_DONE, WORKER_DEAD };

/* Read what worker w sent: its item's result complete (DONE), not yet
 * (BUSY), or the worker is gone (DEAD). */
static enum worker_state worker_read(struct pool *p, struct worker *w)
{
        char buf[65536];
        ssize_t n = read(w->res, buf, sizeof(buf));
        uint64_t len;
        json_error_t err;

        if (n < 0 && (errno == EINTR || errno == EAGAIN))
                return WORKER_BUSY;
        if (n <= 0)
                return WORKER_DEAD;
        strbuf_add(&w->in, buf, (size_t)n);
        if (w->in.len < sizeof(len))
                return WORKER_BUSY;
        memcpy(&len, w->in.buf, sizeof(len));
        if (len > RESULT_MAX)
                return WORKER_DEAD;
        if (w->in.len < sizeof(len) + len)
                return WORKER_BUSY;
        p->results[w->item] = json_loadb(w->in.buf + sizeof(len), len, 0, &err);
        if (!p->results[w->item])
                p->results[w->item] = p->ops->lost(w->item, "an unreadable result", p->userdata);
        strbuf_reset(&w->in);
        w->busy = false;
        return WORKER_DONE;
}

static void progress(const struct pool *p, size_t done, bool end)
{
        if (p->ops->progress)
                p->ops->progress(done, p->n, end, p->userdata);
}

/* Hand out the items and collect their results until every item has one
 * or no worker is left. Returns how many are done. */
static size_t pool_dispatch(struct pool *p)
{
        size_t next = 0, done = 0;

        while (done < p->n) {
                struct pollfd fds[JOBS_MAX];
                size_t map[JOBS_MAX], nf = 0;

                for (size_t k = 0; k < p->n_workers; k++) {
                        struct worker *w = &p->workers[k];
                        uint64_t i = next;

                        if (w->pid <= 0 || w->busy || next >= p->n)
                                continue;
                        w->item = next++;
                        w->busy = true;
                        if (!write_all(w->cmd, &i, sizeof(i))) {
                                worker_died(p, k);
                                done++;
                        }
                }
                for (size_t k = 0; k < p->n_workers && nf < ELEMENTSOF(fds); k++)
                        if (p->workers[k].busy) {
                                fds[nf] = (struct pollfd){ .fd = p->workers[k].res, .events = POLLIN };
                                map[nf++] = k;
                        }
                if (!nf)
                        break;
                progress(p, done, false);
                if (poll(fds, nf, -1) < 0 && errno != EINTR)
                        break;
                for (size_t f = 0; f < nf; f++) {
                        if (!fds[f].revents)
                                continue;
                        switch (worker_read(p, &p->workers[map[f]])) {
                        case WORKER_DONE:
                                done++;
                                break;
                        case WORKER_DEAD:
                                worker_died(p, map[f]);
                                done++;
                                break;
                        case WORKER_BUSY:
                                break;
                        }
                }
        }
        return done;
}

int validate_pool_run(size_t n, unsigned jobs, const struct validate_pool_ops *ops, void *userdata,
                      json_t **results)
{
        _cleanup_free_ struct worker *workers = NULL;
        struct pool p = { .n = n, .ops = ops, .userdata = userdata, .results = results };
        size_t done = 0;
        int r = 0;

        jobs = jobs < 1 ? 1 : jobs > JOBS_MAX ? JOBS_MAX : jobs;
        if (jobs > 1) {
                workers = xcalloc(jobs, sizeof(*workers));
                p.workers = workers;
                p.n_workers = jobs;
                /* A worker that died must not take us with it when we
                 * write to it. */
                signal(SIGPIPE, SIG_IGN);
                for (size_t k = 0; k < jobs; k++) {
                        r = worker_start(&p, k);
                        if (r < 0) {
                                p.n_workers = k;
                                break;
                        }
                }
                done = pool_dispatch(&p);
                for (size_t k = 0; k < p.n_workers; k++)
                        if (workers[k].pid > 0)
                                worker_stop(&workers[k], &(int){ 0 });
                signal(SIGPIPE, SIG_DFL);
        }

        /* One job (a fork per module costs more than some checks), or what
         * no worker was left to do: in this process. */
        for (size_t i = 0; i < n; i++)
                if (!results[i]) {
                        progress(&p, done++, false);
                        results[i] = ops->work(i, userdata);
                }
        progress(&p, done, true);
        return r;
}
