/**
 * The per-IP cap across the scheduler partitions of one process (seed 000, Table 1): at most
 * `maxPerIp` requests in flight to one server address, whichever hosts on it they are for. Shared by
 * every partition's processor; each counts its requests by id, so a partition that closes (moved to
 * another process) gives its slots back. Hosts waiting for a slot are woken when one frees.
 *
 * With one scheduler process this is exact for every request whose IP is known. Requests to an IP
 * are keyed by it on `frontier`, so one fetcher process serves them all and its own limiter (set to
 * the same cap) holds it too. A host's address is unknown only before its first answer: with
 * `learnAddressFirst` the scheduler asks the fetcher to resolve it before any request to the server.
 */
export class IpSlots {
  private readonly byIp = new Map<string, number>();
  private readonly byRequest = new Map<string, string>();
  private readonly waiting = new Map<string, Set<() => void>>();

  /** A request may start to `ip` (an unknown IP is not limited here). */
  mayStart(ip: string | undefined, maxPerIp: number): boolean {
    if (ip === undefined) return true;
    return (this.byIp.get(ip) ?? 0) < maxPerIp;
  }

  /** Requests in flight to `ip`. */
  inFlight(ip: string): number {
    return this.byIp.get(ip) ?? 0;
  }

  started(requestId: string, ip: string | undefined): void {
    if (ip === undefined || this.byRequest.has(requestId)) return;
    this.byRequest.set(requestId, ip);
    this.byIp.set(ip, (this.byIp.get(ip) ?? 0) + 1);
  }

  /** The request's outcome came, or it was given up or re-issued: its slot frees and waiters wake. */
  finished(requestId: string): void {
    const ip = this.byRequest.get(requestId);
    if (ip === undefined) return;
    this.byRequest.delete(requestId);
    const left = (this.byIp.get(ip) ?? 0) - 1;
    if (left > 0) this.byIp.set(ip, left);
    else this.byIp.delete(ip);
    const waiters = this.waiting.get(ip);
    if (waiters === undefined) return;
    this.waiting.delete(ip);
    for (const wake of waiters) wake();
  }

  /** Calls `wake` once, when a slot of `ip` frees. */
  waitFor(ip: string, wake: () => void): void {
    let set = this.waiting.get(ip);
    if (set === undefined) this.waiting.set(ip, (set = new Set()));
    set.add(wake);
  }
}
