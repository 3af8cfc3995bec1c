"""A `brook serve` child process for the real-client tests: started on 127.0.0.1:0 in a data
directory, its address read from its first stdout line, stopped with SIGTERM (which must exit
0) or killed with SIGKILL. Every wait is bounded, so a broken server fails a test instead of
hanging it.

    with Broker(brook_exe, data_dir, {"num.partitions": "6"}) as b:
        run(["kcat", "-b", b.address, "-L"])
"""
import os
import select
import signal
import subprocess
import sys
import time


class Broker:
    def __init__(self, brook, data_dir, configs=None, start_timeout=30.0):
        self.brook = brook
        self.data_dir = data_dir
        self.configs = dict(configs or {})
        self.start_timeout = start_timeout
        self.proc = None
        self.address = None
        self.log_path = os.path.join(os.path.dirname(os.path.abspath(data_dir)),
                                     os.path.basename(data_dir) + ".serve.log")

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, exc_type, exc, tb):
        if self.proc is not None and self.proc.poll() is None:
            if exc_type is None:
                self.stop()
            else:
                self.kill()

    def start(self):
        cmd = [self.brook, "serve", "--data-dir", self.data_dir, "--listen", "127.0.0.1:0", "--log-level", "info"]
        for k, v in self.configs.items():
            cmd += ["--config", f"{k}={v}"]
        log = open(self.log_path, "ab")
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=log)
        log.close()
        line = self._first_line()
        prefix = "listening on "
        if not line.startswith(prefix):
            self.kill()
            fail(f"brook serve printed {line!r} first, not 'listening on HOST:PORT'; log: {self.log_tail()}")
        self.address = line[len(prefix):].strip()

    def _first_line(self):
        deadline = time.monotonic() + self.start_timeout
        buf = b""
        fd = self.proc.stdout.fileno()
        while b"\n" not in buf:
            left = deadline - time.monotonic()
            if left <= 0:
                self.kill()
                fail(f"brook serve printed no line within {self.start_timeout} s; log: {self.log_tail()}")
            ready, _, _ = select.select([fd], [], [], left)
            if ready:
                chunk = os.read(fd, 4096)
                if not chunk:
                    code = self.proc.wait(10)
                    fail(f"brook serve exited with {code} before listening; log: {self.log_tail()}")
                buf += chunk
        return buf.split(b"\n", 1)[0].decode()

    def stop(self, timeout=60.0):
        """SIGTERM: the server must finish, flush and exit 0."""
        self.proc.send_signal(signal.SIGTERM)
        try:
            code = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            fail(f"brook serve did not exit within {timeout} s of SIGTERM; log: {self.log_tail()}")
        self.proc.stdout.close()
        if code != 0:
            fail(f"brook serve exited with {code} after SIGTERM; log: {self.log_tail()}")

    def kill(self):
        """SIGKILL: a crash."""
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(30)
        self.proc.stdout.close()

    def log_tail(self, n=20):
        try:
            with open(self.log_path, "rb") as f:
                return "\n".join(f.read().decode(errors="replace").splitlines()[-n:])
        except OSError:
            return "(no log)"


def fail(msg):
    print(f"FAIL: {msg}", file=sys.stderr, flush=True)
    raise SystemExit(1)


def check(cond, msg):
    if not cond:
        fail(msg)


def run(cmd, input=None, timeout=120):
    """Runs a client command; returns (stdout, stderr) as text; fails on a non-zero exit."""
    try:
        p = subprocess.run(cmd, input=input, capture_output=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        fail(f"{cmd[0]} did not finish within {timeout} s: {' '.join(cmd)}")
    if p.returncode != 0:
        fail(f"{' '.join(cmd)} exited with {p.returncode}: {p.stderr.decode(errors='replace')[-2000:]}")
    return p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")


def murmur2(data: bytes) -> int:
    """Kafka's murmur2 (org.apache.kafka.common.utils.Utils.murmur2), written out here so
    that the tests check brook and the clients against an independent copy."""
    length = len(data)
    seed = 0x9747B28C
    m = 0x5BD1E995
    r = 24
    h = (seed ^ length) & 0xFFFFFFFF
    length4 = length // 4
    for i in range(length4):
        i4 = i * 4
        k = (data[i4] & 0xFF) + ((data[i4 + 1] & 0xFF) << 8) + ((data[i4 + 2] & 0xFF) << 16) + ((data[i4 + 3] & 0xFF) << 24)
        k = (k * m) & 0xFFFFFFFF
        k ^= k >> r
        k = (k * m) & 0xFFFFFFFF
        h = (h * m) & 0xFFFFFFFF
        h ^= k
    rest = length % 4
    if rest == 3:
        h ^= (data[(length & ~3) + 2] & 0xFF) << 16
    if rest >= 2:
        h ^= (data[(length & ~3) + 1] & 0xFF) << 8
    if rest >= 1:
        h ^= data[length & ~3] & 0xFF
        h = (h * m) & 0xFFFFFFFF
    h ^= h >> 13
    h = (h * m) & 0xFFFFFFFF
    h ^= h >> 15
    return h


def java_partition(key: bytes, partitions: int) -> int:
    """The partition Kafka's Java DefaultPartitioner picks for a keyed record."""
    return (murmur2(key) & 0x7FFFFFFF) % partitions


def args():
    import argparse
    p = argparse.ArgumentParser()
    p.add_argument("--brook", required=True, help="the brook executable")
    p.add_argument("--work", required=True, help="a scratch directory (emptied first)")
    p.add_argument("--scenario", default="all", help="which part of the script to run")
    a = p.parse_args()
    import shutil
    shutil.rmtree(a.work, ignore_errors=True)
    os.makedirs(a.work)
    return a
