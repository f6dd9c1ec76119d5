// Preloaded with `node --require` by tests/e2e/mcp_servers.py: a server that listens on a port alone
// (express's `app.listen(PORT)`, every interface) listens on 127.0.0.1 instead, so the tests' MCP server
// is reachable from this machine only.
"use strict";
const net = require("net");
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  if (typeof args[0] === "number" || (typeof args[0] === "string" && /^\d+$/.test(args[0]))) {
    if (typeof args[1] !== "string") args.splice(1, 0, "127.0.0.1");
  } else if (args[0] && typeof args[0] === "object" && "port" in args[0] && !args[0].host) {
    args[0] = { ...args[0], host: "127.0.0.1" };
  }
  return listen.apply(this, args);
};
