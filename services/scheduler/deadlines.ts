/**
 * The partition's requests in flight by request id, each with its host and the time it counts as
 * lost when no outcome has come (lost.ts re-issues or gives it up). A lower bound of the earliest
 * deadline lets the sweep that runs every dispatch interval skip the scan until one may be due.
 */
export class Deadlines {
  private readonly byRequest = new Map<string, { host: string; at: number }>();
  /** No deadline falls before this time: lowered when one is set, raised by a sweep to the earliest it left. */
  private floor = Infinity;

  /** Requests in flight. */
  get size(): number {
    return this.byRequest.size;
  }

  /** The request is lost if no outcome comes by `at`. */
  set(requestId: string, host: string, at: number): void {
    this.byRequest.set(requestId, { host, at });
    if (at < this.floor) this.floor = at;
  }

  /** The request ended (its outcome came, or it was re-issued under a new id). */
  delete(requestId: string): void {
    this.byRequest.delete(requestId);
  }

  /**
   * Takes out every deadline at or before `now` and calls `onDue` for it, in the order they were
   * set; deadlines `onDue` sets (a re-issued request) are seen by this sweep too, as in any Map
   * iteration. Skips the scan while no deadline can be due. A sweep cut short by an error did not
   * see every deadline: the next one scans them all.
   */
  async sweep(now: number, onDue: (requestId: string, host: string) => Promise<void>): Promise<void> {
    if (now < this.floor) return;
    // Deadlines set while the sweep runs lower the floor from here.
    this.floor = Infinity;
    let earliestLeft = Infinity;
    let swept = false;
    try {
      for (const [requestId, { host, at }] of this.byRequest) {
        if (at > now) {
          if (at < earliestLeft) earliestLeft = at;
          continue;
        }
        this.byRequest.delete(requestId);
        await onDue(requestId, host);
      }
      swept = true;
    } finally {
      this.floor = swept ? Math.min(this.floor, earliestLeft) : -Infinity;
    }
  }
}
