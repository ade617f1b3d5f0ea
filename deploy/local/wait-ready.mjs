// Waits until a Kafka broker answers real requests (not just an open port).
// Usage: node wait-ready.mjs <host:port> <timeoutMs> [pid] [serverLog]
// Exit codes: 0 ready, 1 timed out, 2 the broker process died, 64 bad usage.
// Without kafkajs (no `npm ci` yet) it falls back to a TCP probe plus the
// broker's own "started" log line, which is weaker but still meaningful.
import fs from 'node:fs';
import net from 'node:net';

const [address, timeoutArg, pidArg, serverLog] = process.argv.slice(2);
if (!address || !/^[^:]+:\d+$/.test(address)) {
  console.error('usage: wait-ready.mjs <host:port> <timeoutMs> [pid] [serverLog]');
  process.exit(64);
}
const timeoutMs = Number(timeoutArg ?? 60000);
const pid = pidArg ? Number(pidArg) : undefined;
const deadline = Date.now() + timeoutMs;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function processAlive() {
  if (pid === undefined) return true;
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

async function probe() {
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
      return cluster.brokers.length > 0 && cluster.controller != null;
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

while (true) {
  if (!processAlive()) process.exit(2);
  if (await probe()) process.exit(0);
  if (Date.now() >= deadline) process.exit(1);
  await sleep(250);
}
