// Preloaded into a Node server by the tests (NODE_OPTIONS=--require ...):
// every server it starts listens on 127.0.0.1 at a port the system picks,
// whatever port and interface it asked for, and prints that port to stderr
// as "mcpc-test-listening PORT" once it listens. Tests then need no free
// port guessed in advance and expose nothing beyond the loopback interface.
"use strict";
const net = require("net");
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  const callback = args.find((a) => typeof a === "function");
  this.once("listening", () => {
    process.stderr.write(`mcpc-test-listening ${this.address().port}\n`);
  });
  return callback ? listen.call(this, 0, "127.0.0.1", callback) : listen.call(this, 0, "127.0.0.1");
};
