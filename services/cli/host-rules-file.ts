/**
 * The `--host-rules F` file while a crawl runs: read (strictly) at start, where a bad file stops the
 * command with the key named; read again whenever the file changes (polled once a second) or the
 * process gets SIGHUP. A bad edit is logged and the rules in force stay, so a typo never stops or
 * unblocks a running crawl.
 */
import { readFileSync, unwatchFile, watchFile } from 'node:fs';
import { HostRules, HostRulesError } from '../scheduler/host-rules.ts';
import type { HostRulesSource } from '../scheduler/host-rules.ts';
import type { Logger } from '../runtime/index.ts';

export interface WatchedHostRules extends HostRulesSource {
  /** Reads the file again now; false (rules unchanged) when it cannot be read or is refused. */
  reload(): boolean;
  close(): void;
}

function load(file: string): HostRules {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new HostRulesError(`cannot read host rules ${file}: ${(err as Error).message}`);
  }
  return HostRules.parse(text, `host rules ${file}`);
}

export function watchHostRules(file: string, logger: Logger, pollMs = 1000): WatchedHostRules {
  let rules = load(file);
  const reload = (): boolean => {
    try {
      rules = load(file);
      logger.info({ file, rules: rules.size }, 'host rules reloaded');
      return true;
    } catch (err) {
      logger.error({ file, err: (err as Error).message }, 'host rules not reloaded; the previous rules stay in force');
      return false;
    }
  };
  const onChange = (): void => void reload();
  const onHangup = (): void => void reload();
  watchFile(file, { interval: pollMs, persistent: false }, onChange);
  process.on('SIGHUP', onHangup);
  return {
    current: () => rules,
    reload,
    close: () => {
      unwatchFile(file, onChange);
      process.off('SIGHUP', onHangup);
    },
  };
}
