#!/usr/bin/env python3
# The serial side of N SOL BMCs: listens on 127.0.0.1:PORT0..PORT0+N-1 (each ipmi_sim connects
# out to its port), writes a numbered line per console every INTERVAL seconds
# ("node0007 line 123 t=...\r\n", the same number K on every console at a tick) and echoes
# input. Bounded by --seconds. From shared notes/consoles.md 5.3.
#
# No line is lost here: a console whose socket is full keeps the rest and sends it first at
# the next chance (ipmi_sim reads its serial side only as fast as SOL drains). With --state
# FILE, SIGUSR1 appends "K PENDING" to FILE: K is the last line number written, PENDING the
# bytes still waiting in the feeder; a bench marks a window of lines with two signals and then
# counts lines K1+1..K2 in each console's log.
import argparse, os, selectors, signal, socket, time
ap = argparse.ArgumentParser()
ap.add_argument('--port0', type=int, required=True)
ap.add_argument('--n', type=int, required=True)
ap.add_argument('--interval', type=float, default=1.0)
ap.add_argument('--seconds', type=float, default=600)
ap.add_argument('--state', default='')
a = ap.parse_args()
sel = selectors.DefaultSelector()
conns = {}
pending = {}
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
marks = []
if a.state:
    signal.signal(signal.SIGUSR1, lambda *_: marks.append(1))


def push(c, data):
    """Sends what was waiting for c and then data, keeping what the socket does not take."""
    buf = pending.get(c, b'') + data
    try:
        n = c.send(buf)
    except BlockingIOError:
        n = 0
    except OSError:
        pending.pop(c, None)
        return
    if n < len(buf):
        pending[c] = buf[n:]
    else:
        pending.pop(c, None)


while time.time() < end:
    for key, _ in sel.select(timeout=0.01):
        kind, i = key.data
        s = key.fileobj
        if kind == 'L':
            try:
                c, _ = s.accept()
            except OSError:
                continue
            c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            c.setblocking(False)
            conns[c] = i
            sel.register(c, selectors.EVENT_READ, ('C', i))
        else:
            try:
                d = s.recv(4096)
            except BlockingIOError:
                continue
            except OSError:
                d = b''
            if not d:
                sel.unregister(s)
                conns.pop(s, None)
                pending.pop(s, None)
                s.close()
                continue
            push(s, d)
    now = time.time()
    for c in list(pending):
        push(c, b'')
    if now >= nxt:
        k += 1
        nxt += a.interval
        if nxt < now:  # behind (a loaded machine): the next tick from now, numbers unbroken
            nxt = now + a.interval
        for c, i in list(conns.items()):
            push(c, b'node%04d line %d t=%.3f\r\n' % (i, k, now))
    while marks:
        marks.pop()
        with open(a.state, 'a') as f:
            f.write('%d %d\n' % (k, sum(len(b) for b in pending.values())))
