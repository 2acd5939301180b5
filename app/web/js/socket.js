// A WebSocket that reconnects by itself with backoff, and says what state it is in.
//
// States: "connecting", "open", "lost" (will retry), "refused" (auth or not found:
// retrying cannot help), "closed" (closed on purpose).

const FATAL_CODES = new Map([
  [1008, "refused"], // not allowed (bad or missing token)
  [4400, "refused"], // a query or path parameter the socket cannot take
  [4404, "refused"], // no such session / workflow
]);

export class ReconnectingSocket {
  constructor(urlFor, { onFrame, onState, onOpen }) {
    this.urlFor = urlFor;
    this.onFrame = onFrame;
    this.onState = onState;
    this.onOpen = onOpen;
    this.ws = null;
    this.attempt = 0;
    this.timer = null;
    this.stopped = false;
    this.state = "connecting";
    this.opened = 0;
  }

  start() {
    this.stopped = false;
    this.connect();
    return this;
  }

  setState(state, detail) {
    this.state = state;
    if (this.onState) this.onState(state, detail);
  }

  connect() {
    clearTimeout(this.timer);
    this.setState("connecting");
    let ws;
    try {
      ws = new WebSocket(this.urlFor());
    } catch (error) {
      this.scheduleRetry();
      return;
    }
    this.ws = ws;
    ws.addEventListener("open", () => {
      if (ws !== this.ws) return;
      this.attempt = 0;
      this.opened += 1;
      this.setState("open");
      if (this.onOpen) this.onOpen(this.opened > 1);
    });
    ws.addEventListener("message", (event) => {
      if (ws !== this.ws) return;
      let frame;
      try {
        frame = JSON.parse(event.data);
      } catch {
        return;
      }
      this.onFrame(frame);
    });
    ws.addEventListener("close", (event) => {
      if (ws !== this.ws) return;
      this.ws = null;
      if (this.stopped) {
        this.setState("closed");
        return;
      }
      const fatal = FATAL_CODES.get(event.code);
      if (fatal) {
        this.setState(fatal, { code: event.code, reason: event.reason });
        return;
      }
      this.scheduleRetry();
    });
  }

  scheduleRetry() {
    if (this.stopped) return;
    const delay = Math.min(8000, 400 * 2 ** this.attempt) + Math.floor(Math.random() * 200);
    this.attempt += 1;
    this.setState("lost", { retryInMs: delay });
    this.timer = setTimeout(() => this.connect(), delay);
  }

  get isOpen() {
    return this.ws !== null && this.ws.readyState === WebSocket.OPEN;
  }

  send(frame) {
    if (!this.isOpen) return false;
    this.ws.send(JSON.stringify(frame));
    return true;
  }

  stop() {
    this.stopped = true;
    clearTimeout(this.timer);
    if (this.ws) {
      const ws = this.ws;
      this.ws = null;
      ws.close(1000, "bye");
    }
    this.setState("closed");
  }
}
