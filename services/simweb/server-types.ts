/** The simulated web server's options, access log entries and counters (server.ts). */
import type { Clock } from '../runtime/clock.ts';
import type { ModelOptions } from './model.ts';

export interface SimWebOptions extends ModelOptions {
  /** Port for every listen IP; 0 picks a free one (the same on all IPs). Default 0. */
  port?: number;
  /** Loopback addresses to listen on, one socket each. Default ['127.0.0.1']. */
  ips?: string[];
  /** Host name -> listen IP. Default: host i on ips[i % ips.length] (HostBehavior.ip also works). */
  hostIps?: Record<string, string>;
  /** Time source for page versions, Date headers, rate limits and the log. Default systemClock. */
  clock?: Clock;
  /** Reject (421) requests for a host arriving on another IP than its own. Default false. */
  strictIp?: boolean;
  /** Idle keep-alive timeout of connections, wall ms. Default 5000. */
  keepAliveTimeoutMs?: number;
  /** Size of the huge page. Default 10 MiB. */
  hugeBytes?: number;
  /** Decompressed size of the gzip bomb. Default 128 MiB. */
  bombBytes?: number;
  /** Wall ms between bytes of an endlessly slow body. Default 1000. */
  trickleIntervalMs?: number;
  /** Number of rendered bodies kept (per version and encoding). Default 1024. */
  cacheEntries?: number;
  accessLog?: {
    /** Also append NDJSON lines to this file. */
    file?: string;
    /** Keep at most this many entries in memory (oldest 10 % dropped when full). Default 250,000. */
    maxEntries?: number;
  };
}

/** One served (or refused, reset, abandoned) request. */
export interface AccessLogEntry {
  /** Clock time when the request arrived. */
  t: number;
  /** Wall time (Date.now()) when the request arrived. */
  wallMs: number;
  /** Host header without port, lower-cased. */
  host: string;
  /** Path with query, as requested. */
  path: string;
  method: string;
  /** Status sent, or 0 when no response head was sent (reset, hang, client gave up). */
  status: number;
  clientIp: string;
  /** Increments per accepted TCP connection, starting at 1. */
  connectionId: number;
  /** 1-based index of this request on its connection. */
  requestOnConnection: number;
  localIp: string;
  localPort: number;
  /** Body bytes written (after compression). */
  bytes: number;
  /** Wall ms from arrival to the end of the response (or the connection). */
  durationMs: number;
  /** The request carried If-None-Match or If-Modified-Since. */
  conditional: boolean;
  /** Content-Encoding used, if any. */
  encoding?: string;
  /** ETag of the representation answered (recorded even when the host does not send ETags). */
  etag?: string;
  /** The response did not complete. */
  aborted: boolean;
  userAgent?: string;
}

export interface SimWebStats {
  requests: number;
  byStatus: Record<string, number>;
  bytes: number;
  connections: number;
  droppedLogEntries: number;
}

/** A link as found on a page: its canonical absolute URL and how it is written. */
export interface PageLink {
  url: string;
  href: string;
  nofollow: boolean;
}
