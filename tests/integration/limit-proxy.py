#!/usr/bin/env python3
"""limit-proxy.py UPSTREAM MODEFILE LOG - an HTTP proxy in front of a real
`kcanary serve` (UPSTREAM, http://HOST:PORT) that does what a proxy in a
fleet does to an agent's record batches (nginx's client_max_body_size, a
gateway that is down), which the server itself never does to batches of
the agent's size (its cap is 1 MiB gzip'd, the agent sends at most 512 KiB
before gzip). Used by t_agent_delivery.sh.

MODEFILE, read at each request, says what happens to POSTs of
/api/v1/agents/HOST/records (everything else is passed on as it is):
  pass      passed on
  503       answered 503 (the gateway is down)
  limit N   answered 413 when the body is over N bytes, else passed on
Each records POST is one line of LOG: "T N FIRST LAST BYTES STATUS", T the
monotonic time in seconds, N the records in the batch (its gzip'd lines),
FIRST and LAST their seq. Prints "listening on PORT" once bound (port 0).
"""
import gzip
import http.client
import http.server
import json
import sys
import threading
import time
import urllib.parse

UP = urllib.parse.urlsplit(sys.argv[1])
MODEFILE, LOG = sys.argv[2], sys.argv[3]
lock = threading.Lock()


def mode():
    try:
        with open(MODEFILE) as f:
            return f.read().split()
    except OSError:
        return ["pass"]


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def answer(self, status, body, ctype="application/json"):
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def forward(self, body):
        c = http.client.HTTPConnection(UP.hostname, UP.port, timeout=30)
        headers = {k: v for k, v in self.headers.items()
                   if k.lower() not in ("host", "connection", "content-length")}
        c.request(self.command, self.path, body=body, headers=headers)
        r = c.getresponse()
        data = r.read()
        c.close()
        self.answer(r.status, data, r.getheader("Content-Type", "application/json"))
        return r.status

    def do_GET(self):
        self.forward(None)

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        if not (self.path.startswith("/api/v1/agents/") and self.path.endswith("/records")):
            self.forward(body)
            return
        lines = gzip.decompress(body).splitlines() if \
            self.headers.get("Content-Encoding") == "gzip" else body.splitlines()
        seqs = [json.loads(x)["seq"] for x in lines if x.strip()]
        m = mode()
        if m[0] == "503":
            status = 503
            self.answer(503, b'{"error":"limit-proxy: down","status":503}')
        elif m[0] == "limit" and len(body) > int(m[1]):
            status = 413
            self.answer(413, b'{"error":"limit-proxy: body too large","status":413}')
        else:
            status = self.forward(body)
        with lock, open(LOG, "a") as f:
            f.write("%.3f %d %d %d %d %d\n" % (time.monotonic(), len(seqs), seqs[0] if seqs else 0,
                                                seqs[-1] if seqs else 0, len(body), status))


srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print("listening on %d" % srv.server_address[1], flush=True)
srv.serve_forever()
