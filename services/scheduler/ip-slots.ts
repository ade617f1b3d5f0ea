/**
 * The per-IP cap across the scheduler partitions of one process (Muraoka et al., Table 1): at most
 * `maxPerIp` requests in flight to one server address, whichever hosts on it they are for. Shared by
 * every partition's processor; each counts its requests by id, so a partition that closes (moved to
 * another process) gives its slots back. Hosts waiting for a slot are woken when one frees.
 *
 * With one scheduler process this is exact for every request whose IP is known. Requests to an IP
 * are keyed by it on `frontier`, so one fetcher process serves them all and its own limiter (set to
 * the same cap) holds it too. A host's address is unknown only before its first answer: with
 * `learnAddressFirst` the scheduler asks the fetcher to resolve it before any request to the server.
 *
 * A freed slot goes to one waiting host at a time, first come first served; a woken host that does
 * not take it passes it on when its dispatch settles. Each waiting host also looks again after
 * `ipBusyRetryMs`, in case a slot is handed to a host that is never dispatched.
 */
/** A host waiting for a slot of its server's address. */
interface Waiter {
  /** Schedules the host's next dispatch. */
  readonly wake: () => void;
  /** The partition the host belongs to (release() forgets a closed partition's waiters). */
  readonly owner: object;
}

export class IpSlots {
  private readonly byIp = new Map<string, number>();
  private readonly byRequest = new Map<string, string>();
  /** ip → hosts waiting for one of its slots, in the order they first asked (a Map keeps it). */
  private readonly waiting = new Map<string, Map<string, Waiter>>();
  /** host → the address whose freed slot it was woken for, until its dispatch settles it. */
  private readonly handedOut = new Map<string, { ip: string; owner: object }>();

  /** A request may start to `ip` (an unknown IP is not limited here). */
  mayStart(ip: string | undefined, maxPerIp: number): boolean {
    if (ip === undefined) return true;
    return (this.byIp.get(ip) ?? 0) < maxPerIp;
  }

  /** Requests in flight to `ip`. */
  inFlight(ip: string): number {
    return this.byIp.get(ip) ?? 0;
  }

  /** Hosts waiting for a slot of `ip`. */
  waiters(ip: string): number {
    return this.waiting.get(ip)?.size ?? 0;
  }

  started(requestId: string, ip: string | undefined): void {
    if (ip === undefined || this.byRequest.has(requestId)) return;
    this.byRequest.set(requestId, ip);
    this.byIp.set(ip, (this.byIp.get(ip) ?? 0) + 1);
  }

  /**
   * The request's outcome came, or it was given up or re-issued: its slot frees and goes to the
   * host that has waited longest. Waking every waiter instead made each freed slot cost a dispatch
   * of every host on the address, nearly all of which found it taken again.
   */
  finished(requestId: string): void {
    const ip = this.byRequest.get(requestId);
    if (ip === undefined) return;
    this.byRequest.delete(requestId);
    const left = (this.byIp.get(ip) ?? 0) - 1;
    if (left > 0) this.byIp.set(ip, left);
    else this.byIp.delete(ip);
    this.handOut(ip);
  }

  /**
   * `host` waits for a slot of `ip`: `wake` is called once, when a freed slot is handed to it.
   * A host already waiting keeps its place.
   */
  waitFor(ip: string, host: string, wake: () => void, owner: object): void {
    let hosts = this.waiting.get(ip);
    if (hosts === undefined) this.waiting.set(ip, (hosts = new Map()));
    if (!hosts.has(host)) hosts.set(host, { wake, owner });
  }

  /**
   * `host` was dispatched. If it had been woken for a freed slot and left the slot free (its
   * politeness gate closed, its queue ran dry), the next waiter gets the slot.
   */
  settled(host: string, maxPerIp: number): void {
    const given = this.handedOut.get(host);
    if (given === undefined) return;
    this.handedOut.delete(host);
    if (this.mayStart(given.ip, maxPerIp)) this.handOut(given.ip);
  }

  /** A partition closes: its hosts stop waiting, and slots handed to them go to other waiters. */
  release(owner: object): void {
    for (const [ip, hosts] of this.waiting) {
      for (const [host, w] of hosts) if (w.owner === owner) hosts.delete(host);
      if (hosts.size === 0) this.waiting.delete(ip);
    }
    for (const [host, given] of this.handedOut) {
      if (given.owner !== owner) continue;
      this.handedOut.delete(host);
      this.handOut(given.ip);
    }
  }

  /** Wakes the host that has waited longest for `ip`, if any. */
  private handOut(ip: string): void {
    const hosts = this.waiting.get(ip);
    if (hosts === undefined) return;
    const first = hosts.entries().next();
    if (first.done === true) return;
    const [host, w] = first.value;
    hosts.delete(host);
    if (hosts.size === 0) this.waiting.delete(ip);
    this.handedOut.set(host, { ip, owner: w.owner });
    w.wake();
  }
}
