import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { activitiesFor, MEDIA_ACTIVITIES, type Activities } from '../../activities';

// Each worker registers only its own queue's activities: a call the workflows route to the media queue must be
// registered there, and every other call on the io queue, or the task would wait for a worker that never comes.

const WORKFLOWS = path.resolve('workflows');
const sources = (dir: string): string[] =>
  fs
    .readdirSync(dir, { withFileTypes: true })
    .flatMap((e) =>
      e.isDirectory() ? sources(path.join(dir, e.name)) : e.name.endsWith('.ts') ? [path.join(dir, e.name)] : [],
    );
const code = sources(WORKFLOWS)
  .map((f) => fs.readFileSync(f, 'utf8'))
  .join('\n');
const calls = (proxy: RegExp) => new Set([...code.matchAll(proxy)].map((m) => m[1]));

// A stand-in with the real activity names (values are never called here).
const names = [...calls(/\b(?:media|io|net|remote|local|hooks|quick|withModel|finisher|step)\.(\w+)\(/g)];
const fake = Object.fromEntries(
  [...names, ...MEDIA_ACTIVITIES].map((n) => [n, () => undefined]),
) as unknown as Activities;

describe('activities are registered on the queue their workflows send them to', () => {
  it('every activity the workflows call on the media queue is a media activity', () => {
    const media = calls(/\bmedia\.(\w+)\(/g);
    expect(media.size).to.be.greaterThan(3);
    for (const name of media) expect(MEDIA_ACTIVITIES as readonly string[], name).to.include(name);
    expect(Object.keys(activitiesFor('media', fake)).sort()).to.deep.equal([...MEDIA_ACTIVITIES].sort());
  });

  it('every other activity the workflows call is on the io queue, and no CPU-bound one is', () => {
    const io = Object.keys(activitiesFor('io', fake));
    for (const name of calls(/\b(?:io|net|remote|local|hooks|quick|withModel|step)\.(\w+)\(/g))
      expect(io, name).to.include(name);
    for (const name of MEDIA_ACTIVITIES) if (name !== 'pingActivity') expect(io).to.not.include(name);
  });
});
