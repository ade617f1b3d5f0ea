#!/usr/bin/env node
// The `meguri` command. Sources are TypeScript run through tsx's loader, so a fresh clone works
// right after `npm install` with no build step.
import { register } from 'tsx/esm/api';

register();
await import('../services/cli/main.ts');
