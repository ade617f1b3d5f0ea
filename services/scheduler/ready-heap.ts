/** A binary min-heap of (time, host): the hosts of a partition by the time they may be fetched next. */
export class ReadyHeap {
  private times: number[] = [];
  private hosts: string[] = [];

  get size(): number {
    return this.times.length;
  }

  push(time: number, host: string): void {
    this.times.push(time);
    this.hosts.push(host);
    let i = this.times.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (this.times[parent]! <= this.times[i]!) break;
      this.swap(i, parent);
      i = parent;
    }
  }

  peekTime(): number | undefined {
    return this.times[0];
  }

  pop(): { time: number; host: string } | undefined {
    if (this.times.length === 0) return undefined;
    const top = { time: this.times[0]!, host: this.hosts[0]! };
    const lastT = this.times.pop()!;
    const lastH = this.hosts.pop()!;
    if (this.times.length > 0) {
      this.times[0] = lastT;
      this.hosts[0] = lastH;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < this.times.length && this.times[l]! < this.times[m]!) m = l;
        if (r < this.times.length && this.times[r]! < this.times[m]!) m = r;
        if (m === i) break;
        this.swap(i, m);
        i = m;
      }
    }
    return top;
  }

  private swap(a: number, b: number): void {
    [this.times[a], this.times[b]] = [this.times[b]!, this.times[a]!];
    [this.hosts[a], this.hosts[b]] = [this.hosts[b]!, this.hosts[a]!];
  }
}
