/** What every benchmark prints beside its figures: the machine, the Node version and the commit. */
import { execSync } from 'node:child_process';
import os from 'node:os';

export interface MachineInfo {
  cpus: number;
  cpu: string;
  memGiB: number;
  node: string;
  commit: string;
}

export function machineInfo(): MachineInfo {
  let commit = 'unknown';
  try {
    commit = execSync('git rev-parse --short HEAD', { stdio: ['ignore', 'pipe', 'ignore'] }).toString().trim();
  } catch {
    /* not a git checkout */
  }
  return { cpus: os.cpus().length, cpu: os.cpus()[0]?.model ?? '', memGiB: Math.round(os.totalmem() / 2 ** 30), node: process.version, commit };
}

export function machineLine(m: MachineInfo): string {
  return `machine: ${m.cpus} × ${m.cpu}, ${m.memGiB} GiB, node ${m.node}, commit ${m.commit}`;
}
