#!/usr/bin/env python3
"""Makes docs/images/tensorboard_graph.png: TensorBoard's Graphs tab showing an ember MLP's
autograd graph, in headless Chromium.

It logs the graph with ember.utils.tensorboard, starts ``tensorboard`` on port 6006, opens
the Graphs tab in Chromium (``apt-get install -y chromium``) and, through the DevTools
protocol, expands the model's module boxes and selects ``MLP/fc1/AddmmBackward0`` so that
its info card (op, shapes, dtype) shows, then takes the screenshot. Both processes are
stopped at the end. Run from the repository root::

    PYTHONPATH=src python docs/images/make_tensorboard_shot.py [out.png]
"""
from __future__ import annotations

import base64
import json
import os
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import time
import urllib.request

PORT, DEVTOOLS_PORT = 6006, 9222
WIDTH, HEIGHT = 1400, 900
SELECTED = "MLP/fc1/AddmmBackward0"

# Finds an element through every shadow root (TensorBoard's graph is Polymer inside Angular).
DEEP = """
function deep(selector, root) {
  root = root || document;
  const hit = root.querySelector(selector);
  if (hit) return hit;
  for (const el of root.querySelectorAll('*')) {
    if (el.shadowRoot) { const found = deep(selector, el.shadowRoot); if (found) return found; }
  }
  return null;
}
"""


def write_log(log_dir: str) -> None:
    import ember
    import ember.nn as nn
    import ember.nn.functional as F
    from ember.utils.tensorboard import SummaryWriter

    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(64, 32)
            self.fc2 = nn.Linear(32, 10)

        def forward(self, x):
            return F.log_softmax(self.fc2(F.relu(self.fc1(x.flatten(1)))), dim=1)

    ember.manual_seed(0)
    with SummaryWriter(log_dir) as writer:
        writer.add_graph(MLP(), ember.randn(16, 8, 8))  # a batch of 8x8 digits


def wait_for(url: str, seconds: float = 60.0) -> bytes:
    deadline = time.time() + seconds
    while True:
        try:
            with urllib.request.urlopen(url, timeout=5) as response:
                return response.read()
        except OSError:
            if time.time() > deadline:
                raise
            time.sleep(0.5)


class DevTools:
    """Just enough of a WebSocket client (RFC 6455) to speak the DevTools protocol."""

    def __init__(self, ws_url: str):
        rest = ws_url.split("//", 1)[1]
        address, path = rest.split("/", 1)
        host, port = address.split(":")
        self.sock = socket.create_connection((host, int(port)), timeout=60)
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall((f"GET /{path} HTTP/1.1\r\nHost: {address}\r\nUpgrade: websocket\r\n"
                           f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
                           "Sec-WebSocket-Version: 13\r\n\r\n").encode())
        reply = b""
        while b"\r\n\r\n" not in reply:
            reply += self.sock.recv(4096)
        if b" 101 " not in reply.split(b"\r\n", 1)[0]:
            raise RuntimeError(f"DevTools refused the WebSocket: {reply[:200]!r}")
        self.next_id = 0

    def _read(self, n: int) -> bytes:
        data = b""
        while len(data) < n:
            chunk = self.sock.recv(n - len(data))
            if not chunk:
                raise ConnectionError("DevTools closed the connection")
            data += chunk
        return data

    def _receive(self) -> dict:
        message = b""
        while True:
            first, second = self._read(2)
            length = second & 0x7F
            if length == 126:
                (length,) = struct.unpack(">H", self._read(2))
            elif length == 127:
                (length,) = struct.unpack(">Q", self._read(8))
            message += self._read(length)
            if first & 0x80:  # FIN: the last fragment
                return json.loads(message)

    def call(self, method: str, **params):
        self.next_id += 1
        payload = json.dumps({"id": self.next_id, "method": method, "params": params}).encode()
        mask = os.urandom(4)
        n = len(payload)
        header = bytes([0x81]) + (bytes([0x80 | n]) if n < 126 else
                                  bytes([0x80 | 126]) + struct.pack(">H", n) if n < 65536 else
                                  bytes([0x80 | 127]) + struct.pack(">Q", n))
        self.sock.sendall(header + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload)))
        while True:
            reply = self._receive()
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply["result"]

    def evaluate(self, expression: str):
        result = self.call("Runtime.evaluate", expression=DEEP + expression, returnByValue=True)
        return result["result"].get("value")

    def until(self, expression: str, what: str, seconds: float = 60.0):
        deadline = time.time() + seconds
        while time.time() < deadline:
            value = self.evaluate(expression)
            if value:
                return value
            time.sleep(0.5)
        raise TimeoutError(f"TensorBoard did not show {what} within {seconds:.0f} s")


def screenshot(out: str, browser: str) -> None:
    profile = tempfile.mkdtemp(prefix="ember-chromium-")
    chromium = subprocess.Popen(
        [browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
         f"--window-size={WIDTH},{HEIGHT}", f"--remote-debugging-port={DEVTOOLS_PORT}",
         f"--user-data-dir={profile}", "about:blank"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for(f"http://127.0.0.1:{DEVTOOLS_PORT}/json/version")
        pages = json.loads(wait_for(f"http://127.0.0.1:{DEVTOOLS_PORT}/json/list"))
        page = next(p for p in pages if p.get("type") == "page")
        tools = DevTools(page["webSocketDebuggerUrl"])
        tools.call("Emulation.setDeviceMetricsOverride", width=WIDTH, height=HEIGHT,
                   deviceScaleFactor=1, mobile=False)
        tools.call("Page.navigate", url=f"http://localhost:{PORT}/#graphs")
        tools.until("!!deep('g.node[data-name=\"MLP\"]')", "the MLP box")
        tools.evaluate("deep('tf-graph-scene').fire('node-toggle-expand', {name: 'MLP'}); 1")
        tools.until("!!deep('g.node[data-name=\"MLP/fc2\"]')", "the MLP box opened")
        tools.evaluate("deep('tf-graph-scene').fire('node-toggle-expand', {name: 'MLP/fc2'}); 1")
        tools.until("!!deep('g.node[data-name=\"MLP/fc2/AddmmBackward0\"]')", "MLP/fc2 opened")
        # Selecting a node expands the boxes around it and opens its info card.
        tools.evaluate(f"deep('tf-graph-scene').fire('node-select', {{name: '{SELECTED}'}}); 1")
        tools.until(f"!!deep('g.node[data-name=\"{SELECTED}\"]')", SELECTED)
        time.sleep(2)  # the expand animation
        tools.evaluate("deep('tf-graph-scene').fit(); 1")
        time.sleep(2)  # the zoom-to-fit transition
        png = base64.b64decode(tools.call("Page.captureScreenshot", format="png")["data"])
        with open(out, "wb") as f:
            f.write(png)
    finally:
        chromium.terminate()
        chromium.wait(timeout=30)
        shutil.rmtree(profile, ignore_errors=True)


def main() -> None:
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "tensorboard_graph.png")
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        sys.exit("needs Chromium: apt-get install -y chromium")
    log_dir = tempfile.mkdtemp(prefix="ember-tensorboard-")
    write_log(log_dir)
    server = subprocess.Popen(
        [sys.executable, "-m", "tensorboard.main", "--logdir", log_dir, "--port", str(PORT),
         "--bind_all"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for(f"http://localhost:{PORT}/data/plugin/graphs/info")
        screenshot(out, browser)
    finally:
        server.terminate()
        server.wait(timeout=30)
        shutil.rmtree(log_dir, ignore_errors=True)
    print(f"wrote {out} ({os.path.getsize(out) // 1024} KB)")


if __name__ == "__main__":
    main()
