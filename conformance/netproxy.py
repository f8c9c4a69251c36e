"""A rig-owned TCP proxy for the conformance matrix (Python 3 stdlib, loopback only).

Every connection to a Eureka peer in a three-peer cell goes through one of these links, so the
rig can cut what crosses the network without touching the kernel's routing or needing root:

  forward    the link passes bytes both ways (the normal state);
  blackhole  a peer that vanished or a partition: new connections are accepted and then never
             answered, bytes on open connections are dropped, so the sender waits for its own
             timeout (connect-then-silence, as a lost host behind a stateful firewall looks);
  refuse     a stopped process on a live host: the listening socket is closed (connects get a
             RST, "connection refused") and every open connection is reset.

A Link listens on (host, listen_port) and forwards to (host, target_port). Links run on one
asyncio loop in a daemon thread; `set_mode` is thread-safe and returns once the change is in
effect, so the rig can time a fault to the millisecond it reports.
"""
import asyncio
import socket
import struct
import threading
import time


class Link:
    def __init__(self, name, host, listen_port, target_host, target_port):
        self.name = name
        self.host, self.listen_port = host, listen_port
        self.target = (target_host, target_port)
        self.mode = "forward"
        self.server = None
        self.conns = set()          # (client_writer, upstream_writer or None)
        self.accepted = 0
        self.changes = []           # (epoch_ms, mode)

    async def start(self):
        self.server = await asyncio.start_server(self._handle, self.host, self.listen_port,
                                                 reuse_address=True, backlog=128)

    async def _handle(self, reader, writer):
        self.accepted += 1
        entry = [writer, None]
        self.conns.add(tuple(entry))
        if self.mode != "forward":
            # blackhole: hold the connection open and say nothing.
            await self._drain_forever(reader)
            return
        try:
            up_reader, up_writer = await asyncio.open_connection(*self.target)
        except OSError:
            self._reset(writer)
            return
        pair = (writer, up_writer)
        self.conns.discard(tuple(entry))
        self.conns.add(pair)
        await asyncio.gather(self._pipe(reader, up_writer), self._pipe(up_reader, writer),
                             return_exceptions=True)
        self.conns.discard(pair)
        for w in pair:
            try:
                w.close()
            except Exception:
                pass

    async def _drain_forever(self, reader):
        try:
            while await reader.read(65536):
                pass
        except Exception:
            pass

    async def _pipe(self, reader, writer):
        try:
            while True:
                data = await reader.read(65536)
                if not data:
                    break
                if self.mode != "forward":
                    continue            # blackhole: bytes vanish
                writer.write(data)
                await writer.drain()
        finally:
            try:
                if writer.can_write_eof():
                    writer.write_eof()
            except Exception:
                pass

    @staticmethod
    def _reset(writer):
        """Close with a RST (SO_LINGER 0), as a crashed process's kernel does."""
        try:
            sock = writer.get_extra_info("socket")
            if sock is not None:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            writer.transport.abort()
        except Exception:
            pass

    async def apply(self, mode):
        old, self.mode = self.mode, mode
        self.changes.append((int(time.time() * 1000), mode))
        if mode == "refuse":
            if self.server is not None:
                self.server.close()
                self.server = None
            for conn in list(self.conns):
                for w in conn:
                    if w is not None:
                        self._reset(w)
            self.conns.clear()
        elif old == "refuse":
            await self.start()
        if mode == "forward" and old == "blackhole":
            # Connections held silent during the black hole never recover (their peers have
            # long timed out); reset them so nothing half-open lingers into the next trial.
            for conn in list(self.conns):
                for w in conn:
                    if w is not None:
                        self._reset(w)
            self.conns.clear()


class Proxy:
    """The set of links, on one event loop in a daemon thread."""

    def __init__(self):
        self.links = {}
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="netproxy", daemon=True)
        self.thread.start()

    def _call(self, coro, timeout=10):
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def add(self, name, host, listen_port, target_host, target_port):
        link = Link(name, host, listen_port, target_host, target_port)
        self._call(link.start())
        self.links[name] = link
        return link

    def set_mode(self, names, mode):
        """Set every named link to `mode` (forward, blackhole, refuse); returns the epoch ms."""
        assert mode in ("forward", "blackhole", "refuse"), mode
        for n in names:
            self._call(self.links[n].apply(mode))
        return int(time.time() * 1000)

    def close(self):
        for link in self.links.values():
            try:
                self._call(link.apply("refuse"), timeout=2)
            except Exception:
                pass
        self.loop.call_soon_threadsafe(self.loop.stop)
