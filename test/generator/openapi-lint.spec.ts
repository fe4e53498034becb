/**
 * The generated OpenAPI document passes Redocly's lint (redocly.yaml, with
 * the meant exceptions in .redocly.lint-ignore.yaml) with no error and no
 * warning, so that what third parties generate clients from cannot rot.
 * Offline: telemetry and the update check are off.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

describe('generated/openapi.gen.yaml under redocly lint', function () {
  this.timeout(120_000);

  it('shows no error and no warning', () => {
    const run = spawnSync(`${ROOT}node_modules/.bin/redocly`, ['lint', 'generated/openapi.gen.yaml', '--format=json'], {
      cwd: ROOT,
      encoding: 'utf8',
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' },
      maxBuffer: 64 * 1024 * 1024,
    });
    expect(run.error, String(run.error)).to.equal(undefined);
    const report = JSON.parse(run.stdout.slice(run.stdout.indexOf('{'))) as {
      totals: { errors: number; warnings: number; ignored: number };
      problems: { ruleId: string; message: string; location: { pointer: string }[] }[];
    };
    const problems = report.problems.map((p) => `${p.ruleId} at ${p.location[0]?.pointer}: ${p.message}`);
    expect(problems, problems.join('\n')).to.deep.equal([]);
    expect(report.totals).to.include({ errors: 0, warnings: 0 });
    expect(run.status, run.stderr).to.equal(0);
  });
});
