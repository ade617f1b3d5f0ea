/**
 * Tells whether the running code is inside a call, without async_hooks.
 *
 * An AsyncLocalStorage would answer that, but while one exists Node runs promise hooks for every
 * promise of the process (in an embedded crawl: ≈ 4 % of the main thread, and 8 % of what it
 * allocates). V8's async stack traces answer it for free until asked: `run(fn)` calls fn inside an
 * async function of its own name, and code is inside when that function is on its stack, either
 * below it synchronously or waiting (through `await`, Promise.all or `then`) for what the code
 * returns. Code fn started without waiting for it (a timer, a detached promise) is outside, as is
 * everything once fn has ended: that is exactly the code that fn's end does not depend on.
 */

let frames = 0;

export class CallFrame {
  /** The name of the function run() calls through; it is on the stack of everything inside. */
  readonly functionName: string;
  private readonly enter: <T>(fn: () => Promise<T>) => Promise<T>;
  private active = 0;

  constructor(label: string) {
    this.functionName = `${label}$${++frames}`;
    // A function defined under a computed key takes the key as its name, which stack frames show.
    const named = {
      [this.functionName]: async <T>(fn: () => Promise<T>): Promise<T> => {
        this.active++;
        try {
          return await fn();
        } finally {
          this.active--;
        }
      },
    };
    this.enter = named[this.functionName] as <T>(fn: () => Promise<T>) => Promise<T>;
  }

  /** Calls fn inside this frame (a synchronous throw becomes a rejection). */
  run<T>(fn: () => Promise<T>): Promise<T> {
    return this.enter(fn);
  }

  /** Calls of run() that have not ended. */
  get running(): number {
    return this.active;
  }

  /** Whether the caller is inside a call of run() that has not ended (cheap while none runs). */
  encloses(): boolean {
    return this.active > 0 && onStack(this.functionName);
  }
}

/** Whether a function of this name is on the current stack, async frames included. */
function onStack(functionName: string): boolean {
  const limit = Error.stackTraceLimit;
  const prepare = Error.prepareStackTrace;
  let found = false;
  try {
    Error.stackTraceLimit = Infinity;
    // Call sites, not the text of the trace: the format is anyone's to change.
    Error.prepareStackTrace = (_err, sites) => {
      found = sites.some((site) => site.getFunctionName() === functionName);
      return '';
    };
    const probe: { stack?: string } = {};
    Error.captureStackTrace(probe);
    void probe.stack; // the trace is prepared when first read
  } finally {
    Error.stackTraceLimit = limit;
    Error.prepareStackTrace = prepare;
  }
  return found;
}
