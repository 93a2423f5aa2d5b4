// Summarises a V8 CPU profile written by `node --cpu-prof`: the functions with the most self time.
// Usage: node scripts/bench/profile-summary.mjs <file.cpuprofile> [top=25]
import { readFileSync } from 'node:fs';
import { selfTimes } from './profile.mjs';

const [file, top = '25'] = process.argv.slice(2);
if (file === undefined) {
  console.error('usage: node scripts/bench/profile-summary.mjs <file.cpuprofile> [top]');
  process.exit(2);
}
for (const { percent, name } of selfTimes(JSON.parse(readFileSync(file, 'utf8')), Number(top)))
  console.log(`${percent.toFixed(1).padStart(5)} %  ${name}`);
