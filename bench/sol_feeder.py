#!/usr/bin/env python3
# The serial side of N SOL BMCs: listens on 127.0.0.1:PORT0..PORT0+N-1 (each ipmi_sim connects
# out to its port), writes a numbered line per console every INTERVAL seconds and echoes input.
# Bounded by --seconds. From shared notes/consoles.md 5.3.
import argparse, selectors, socket, time
ap = argparse.ArgumentParser()
ap.add_argument('--port0', type=int, required=True)
ap.add_argument('--n', type=int, required=True)
ap.add_argument('--interval', type=float, default=1.0)
ap.add_argument('--seconds', type=float, default=600)
a = ap.parse_args()
sel = selectors.DefaultSelector()
conns = {}
for i in range(a.n):
    ls = socket.socket()
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(('127.0.0.1', a.port0 + i))
    ls.listen(2)
    ls.setblocking(False)
    sel.register(ls, selectors.EVENT_READ, ('L', i))
end = time.time() + a.seconds
nxt = time.time()
k = 0
while time.time() < end:
    for key, _ in sel.select(timeout=0.05):
        kind, i = key.data
        s = key.fileobj
        if kind == 'L':
            c, _ = s.accept()
            c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            conns[c] = i
            sel.register(c, selectors.EVENT_READ, ('C', i))
        else:
            try:
                d = s.recv(4096)
            except OSError:
                d = b''
            if not d:
                sel.unregister(s)
                conns.pop(s, None)
                s.close()
                continue
            try:
                s.sendall(d)
            except OSError:
                pass
    if time.time() >= nxt:
        k += 1
        nxt += a.interval
        for c, i in list(conns.items()):
            try:
                c.send(b'node%04d line %d t=%.3f\r\n' % (i, k, time.time()))
            except OSError:
                pass
