'use strict';
/**
 * kafkajs's protocol Encoder (src/protocol/encoder.js, its own source unchanged) given buffers from
 * Buffer.allocUnsafe instead of Buffer.alloc. kafkajs makes an Encoder for every record it produces,
 * each with a new zero-filled 512-byte buffer (an ArrayBuffer of its own), and grows it by doubling
 * into more zero-filled buffers: 4 % of the event loop of a crawl on Kafka, and work for the garbage
 * collector. The encoder writes strictly in order and hands out only the bytes it wrote (`buffer` is
 * [0, offset)), so bytes it never wrote are never read; small buffers now come from Node's pool.
 * Installed into kafkajs by kafkajs.cjs.
 */
const { createRequire } = require('node:module');
const { readFileSync } = require('node:fs');
const path = require('node:path');
const vm = require('node:vm');

/** `Buffer` as the encoder sees it: the real one, except that alloc leaves the bytes unfilled. */
const UnfilledBuffer = Object.assign(Object.create(Buffer), { alloc: (size) => Buffer.allocUnsafe(size) });

/** Compiles kafkajs's encoder module at `file` with `buffer` in place of the global Buffer. */
function compileEncoder(file, buffer) {
  let source;
  try {
    source = readFileSync(file, 'utf8');
  } catch (err) {
    throw new Error(`meguri could not read kafkajs's protocol encoder at ${file} (a different kafkajs version?): ${err.message}`);
  }
  const wrapper = vm.compileFunction(source, ['exports', 'require', 'module', '__filename', '__dirname', 'Buffer'], { filename: file });
  const mod = { exports: {} };
  wrapper.call(mod.exports, mod.exports, createRequire(file), mod, file, path.dirname(file), buffer);
  return mod.exports;
}

module.exports = { compileEncoder, UnfilledBuffer };
