/* A redistributed copy with its #error lines deleted (STACK.md §6.1: the
 * bleedingfight/Inference copy keeps "#if __GNUC__ > 9" with an empty
 * body): the limit is stated, but nothing enforces it. */
#if !__NV_NO_HOST_COMPILER_CHECK

#if defined(__GNUC__)

#if __GNUC__ > 9


#endif /* __GNUC__ > 9 */

#if defined(__clang__) && !defined(__ibmxl_vrm__) && !defined(__ICC) && !defined(__HORIZON__) && !defined(__APPLE__)

#if (__clang_major__ >= 10) || (__clang_major__ < 3) || ((__clang_major__ == 3) &&  (__clang_minor__ < 3))

#endif

#endif

#endif /* __GNUC__ */

#endif  /* !__NV_NO_HOST_COMPILER_CHECK */
