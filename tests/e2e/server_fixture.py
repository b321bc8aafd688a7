# Starts `tessera serve` on a free loopback port for end-to-end tests, waits
# until /ready answers 200, and always stops it (SIGTERM, then SIGKILL) so no
# test leaves a server behind. Also the small /metrics and SSE helpers the
# server tests share.
import os
import re
import signal
import subprocess
import tempfile
import time

import httpx


# The name test servers serve their model under; requests naming another get 404.
MODEL_ID = "test-model"


class ServerProcess:
    def __init__(self, tessera_bin, model_path, extra_args=(), api_key=None, ready_timeout=180):
        self.log = tempfile.NamedTemporaryFile(prefix="tessera-serve-", suffix=".log", delete=False)
        names = [] if any(a in ("--served-model-name", "--alias", "--model-name") for a in extra_args) \
            else ["--served-model-name", MODEL_ID]
        args = [tessera_bin, "serve", "-m", model_path, "--host", "127.0.0.1", "--port", "0",
                "--threads", "2", *names, *extra_args]
        self.proc = subprocess.Popen(args, stdout=self.log, stderr=self.log)
        self.port = self._wait_for_port(30)
        self.base_url = f"http://127.0.0.1:{self.port}"
        self._wait_ready(ready_timeout, {"Authorization": "Bearer " + api_key} if api_key else {})

    def log_text(self):
        with open(self.log.name, encoding="utf-8", errors="replace") as f:
            return f.read()

    def _wait_for_port(self, timeout):
        deadline = time.time() + timeout
        while time.time() < deadline:
            m = re.search(r"listening on http://127\.0\.0\.1:(\d+)", self.log_text())
            if m:
                return int(m.group(1))
            if self.proc.poll() is not None:
                raise RuntimeError("tessera serve exited:\n" + self.log_text())
            time.sleep(0.05)
        self.stop()
        raise RuntimeError("tessera serve did not report its port:\n" + self.log_text())

    def _wait_ready(self, timeout, headers):
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("tessera serve exited:\n" + self.log_text())
            try:
                if httpx.get(self.base_url + "/ready", headers=headers, timeout=5).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        self.stop()
        raise RuntimeError("tessera serve never became ready:\n" + self.log_text())

    def stop(self, timeout=30):
        """SIGTERM and wait; returns the exit code (SIGKILL if it hangs)."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()
        self.final_log = self.log_text()
        os.unlink(self.log.name)
        return self.proc.returncode


def sse_events(response):
    """The data payloads of an SSE response, in order ("[DONE]" included)."""
    out = []
    for line in response.iter_lines():
        if line.startswith("data: "):
            out.append(line[len("data: "):])
        else:
            assert line == "", line
    return out


# Every engine series carries its model's label (several models per server);
# `metric` reads the first model's (the default one's) without naming it.
MODEL_LABEL = re.compile(r',?model="(?:[^"\\]|\\.)*"')


def unlabel_model(series):
    return MODEL_LABEL.sub("", series).replace("{,", "{").replace("{}", "")


def metric(text, name):
    for line in text.splitlines():
        series, _, value = line.rpartition(" ")
        if not line.startswith("#") and unlabel_model(series) == name:
            return float(value)
    raise AssertionError(name + " missing from /metrics")


def wait_until_idle(server, timeout=15):
    """True once the engine reports no running or waiting sequences."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        text = httpx.get(server.base_url + "/metrics").text
        if metric(text, "tessera_num_requests_running") == 0 and metric(text, "tessera_num_requests_waiting") == 0:
            return True
        time.sleep(0.1)
    return False
