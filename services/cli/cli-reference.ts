/**
 * The command reference of docs/cli.md, read off the commander definitions: per command its usage
 * line, its description, its arguments and a table of its flags with their defaults. The help text
 * is the single source; this only lays it out as markdown. Pure: it reads the program it is given
 * (nothing runs, nothing is spawned), and the same program always gives the same lines.
 */
import { Help } from 'commander';
import type { Argument, Command, Option } from 'commander';

export interface CommandReference {
  /** The command below `meguri`, e.g. `stats hosts`. */
  readonly path: string;
  readonly lines: readonly string[];
}

/**
 * Every visible command of the program (not `help`), depth first in the order they were defined. A
 * group such as `topics`, which only holds commands, has no reference of its own unless it defines
 * flags or arguments.
 */
export function commandReferences(program: Command): CommandReference[] {
  const help = new Help(); // unsorted: definition order
  const out: CommandReference[] = [];
  const walk = (cmd: Command, path: string): void => {
    const subs = help.visibleCommands(cmd).filter((sub) => sub.name() !== 'help');
    const own = visibleOptions(cmd).length > 0 || cmd.registeredArguments.length > 0;
    if (subs.length === 0 || own) out.push({ path, lines: commandLines(cmd, path) });
    for (const sub of subs) walk(sub, `${path} ${sub.name()}`);
  };
  for (const cmd of help.visibleCommands(program)) {
    if (cmd.name() !== 'help') walk(cmd, cmd.name());
  }
  return out;
}

/** One command's reference: usage, description, then the arguments and flags tables (when it has any). */
export function commandLines(cmd: Command, path: string): string[] {
  const lines = [`\`meguri ${path} ${cmd.usage()}\``.replace(/\s+`$/, '`'), '', inline(cmd.description())];
  if (cmd.registeredArguments.length > 0) {
    lines.push('', '| argument | meaning |', '|---|---|');
    for (const arg of cmd.registeredArguments) lines.push(row([code(argumentName(arg)), inline(argumentMeaning(arg))]));
  }
  const options = visibleOptions(cmd);
  if (options.length > 0) {
    lines.push('', '| flag | default | meaning |', '|---|---|---|');
    for (const option of options) lines.push(row([code(option.flags), optionDefault(option), inline(optionMeaning(option))]));
  }
  return lines;
}

function visibleOptions(cmd: Command): Option[] {
  return cmd.options.filter((option) => !option.hidden);
}

/** `<name>`, `[name]`, `<name...>` as commander prints them in usage. */
function argumentName(arg: Argument): string {
  const name = `${arg.name()}${arg.variadic ? '...' : ''}`;
  return arg.required ? `<${name}>` : `[${name}]`;
}

function argumentMeaning(arg: Argument): string {
  const extra = [
    ...(arg.argChoices ? [choices(arg.argChoices)] : []),
    ...(arg.defaultValue !== undefined ? [`default: ${arg.defaultValueDescription ?? shortValue(arg.defaultValue)}`] : []),
  ];
  return withExtra(arg.description, extra);
}

/** What the flag is when not given: `required`, commander's default (or its description), or nothing. */
function optionDefault(option: Option): string {
  if (option.mandatory) return 'required';
  if (option.defaultValueDescription !== undefined) return inline(option.defaultValueDescription);
  const value = option.defaultValue as unknown;
  if (value === undefined || (Array.isArray(value) && value.length === 0)) return '';
  return code(shortValue(value));
}

/** The description, then what commander's help adds after it (choices, preset, environment variable). */
function optionMeaning(option: Option): string {
  const extra = [
    ...(option.argChoices ? [choices(option.argChoices)] : []),
    ...(option.optional && option.presetArg !== undefined ? [`preset: ${shortValue(option.presetArg)}`] : []),
    ...(option.envVar !== undefined ? [`env: ${option.envVar}`] : []),
  ];
  return withExtra(option.description, extra);
}

function choices(values: readonly string[]): string {
  return `choices: ${values.map((v) => `\`${v}\``).join(', ')}`;
}

function withExtra(description: string, extra: readonly string[]): string {
  if (extra.length === 0) return description;
  return `${description}${description === '' ? '' : ' '}(${extra.join('; ')})`;
}

/** A default as commander's help shows it: JSON. */
function shortValue(value: unknown): string {
  return JSON.stringify(value) ?? String(value);
}

function code(text: string): string {
  return `\`${text.replace(/\|/g, '\\|')}\``;
}

/**
 * Help text made safe for a markdown table cell: one line, `|` escaped, and outside `code` spans
 * `<` (which could open an HTML tag) and `*` (emphasis) escaped too.
 */
function inline(text: string): string {
  return text
    .replace(/\s*\n\s*/g, ' ')
    .split(/(`[^`]*`)/)
    .map((part, i) => (i % 2 === 1 ? part : part.replace(/[\\<*]/g, (c) => `\\${c}`)).replace(/\|/g, '\\|'))
    .join('');
}

function row(cells: readonly string[]): string {
  return `| ${cells.join(' | ')} |`;
}
