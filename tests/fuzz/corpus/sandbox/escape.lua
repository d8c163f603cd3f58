local f = load(string.dump(function() end))
os.execute("id")
io.open("/etc/passwd")
require("os")
