// Waits until Kafka brokers answer real requests (not just an open port).
// Usage: node wait-ready.mjs [--min-brokers=N] <host:port>[,<host:port>...] <timeoutMs> [pid[,pid...]] [serverLog...]
// Exit codes: 0 ready, 1 timed out, 2 a broker process died, 64 bad usage.
// With several addresses every one must answer; with --min-brokers each must also list itself
// among at least N live brokers (a cluster node counts once the controller has unfenced it).
// Without kafkajs (no `npm ci` yet) it falls back to a TCP probe plus each
// broker's own "started" log line, which is weaker but still meaningful.
import fs from 'node:fs';
import net from 'node:net';

const argv = process.argv.slice(2);
let minBrokers = 0;
if (argv[0]?.startsWith('--min-brokers=')) minBrokers = Number(argv.shift().slice('--min-brokers='.length));
const [addressArg, timeoutArg, pidArg, ...serverLogs] = argv;
const addresses = (addressArg ?? '').split(',');
if (!addressArg || !addresses.every((a) => /^[^:]+:\d+$/.test(a)) || !Number.isInteger(minBrokers)) {
  console.error('usage: wait-ready.mjs [--min-brokers=N] <host:port>[,<host:port>...] <timeoutMs> [pid[,pid...]] [serverLog...]');
  process.exit(64);
}
const timeoutMs = Number(timeoutArg ?? 60000);
const pids = pidArg ? pidArg.split(',').map(Number) : [];
const deadline = Date.now() + timeoutMs;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function processAlive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM means it exists but belongs to someone else.
    return err.code === 'EPERM';
  }
}

function tcpOpen(host, port) {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port: Number(port) });
    const done = (ok) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1000, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

let kafkajs;
try {
  kafkajs = await import('kafkajs');
} catch {
  console.error('wait-ready: kafkajs not installed, falling back to a port + log check');
}

async function probe(address, serverLog) {
  if (kafkajs) {
    const { Kafka, logLevel } = kafkajs;
    const kafka = new Kafka({
      clientId: 'meguri-wait-ready',
      brokers: [address],
      logLevel: logLevel.NOTHING,
      connectionTimeout: 1000,
      requestTimeout: 2000,
      retry: { retries: 0 },
    });
    const admin = kafka.admin();
    try {
      await admin.connect();
      const cluster = await admin.describeCluster();
      if (cluster.brokers.length === 0 || cluster.controller == null) return false;
      if (minBrokers === 0) return true;
      // The metadata may come from another node: this one counts once the cluster lists it.
      const self = cluster.brokers.some((b) => `${b.host}:${b.port}` === address);
      return self && cluster.brokers.length >= minBrokers;
    } catch {
      return false;
    } finally {
      await admin.disconnect().catch(() => {});
    }
  }
  const [host, port] = address.split(':');
  if (!(await tcpOpen(host, port))) return false;
  if (!serverLog) return true;
  try {
    return /Kafka Server started/.test(fs.readFileSync(serverLog, 'utf8'));
  } catch {
    return false;
  }
}

// Nodes that answered once are not asked again; a process that dies still ends the wait.
const waiting = new Set(addresses.keys());
while (true) {
  if (!pids.every(processAlive)) process.exit(2);
  const answers = await Promise.all([...waiting].map(async (i) => [i, await probe(addresses[i], serverLogs[i])]));
  for (const [i, ok] of answers) if (ok) waiting.delete(i);
  if (waiting.size === 0) process.exit(0);
  if (Date.now() >= deadline) process.exit(1);
  await sleep(250);
}
