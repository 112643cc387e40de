import { expect } from 'chai';
import { BlobNotFoundError, cachedJsonReader, writeBlobJson, type BlobStore } from '../../core/stores/blob-store';
import { localBackend, type Backend } from '../support/stores/blob-backends';

/** The store with its reads counted. */
function counted(store: BlobStore): { store: BlobStore; gets: string[] } {
  const gets: string[] = [];
  return {
    gets,
    store: new Proxy(store, {
      get(target, prop, receiver) {
        if (prop === 'get')
          return (key: string) => {
            gets.push(key);
            return target.get(key);
          };
        const v = Reflect.get(target, prop, receiver) as unknown;
        return typeof v === 'function' ? v.bind(target) : v;
      },
    }),
  };
}

describe('cachedJsonReader (core/stores/blob-store.ts)', () => {
  let b: Backend;
  beforeEach(async () => {
    b = await localBackend();
  });
  afterEach(() => b.dispose());

  it('reads a blob once, answers later reads from memory, and keeps only the newest `capacity` keys', async () => {
    for (const k of ['a', 'b', 'c']) await writeBlobJson(b.store, `m/${k}.json`, { k });
    const { store, gets } = counted(b.store);
    const reader = cachedJsonReader<{ k: string }>(store, 2);
    expect(await reader.read('m/a.json')).to.deep.equal({ k: 'a' });
    expect(await reader.read('m/a.json')).to.deep.equal({ k: 'a' });
    await reader.read('m/b.json');
    await reader.read('m/c.json'); // a goes: the oldest of three
    await reader.read('m/c.json');
    await reader.read('m/a.json');
    expect(gets).to.deep.equal(['m/a.json', 'm/b.json', 'm/c.json', 'm/a.json']);
  });

  it('answers a remembered value without reading, and keeps no failed read', async () => {
    const { store, gets } = counted(b.store);
    const reader = cachedJsonReader<{ n: number }>(store, 4);
    reader.remember('m/new.json', { n: 1 });
    expect(await reader.read('m/new.json')).to.deep.equal({ n: 1 });
    await reader.read('m/absent.json').then(
      () => expect.fail('should reject'),
      (e: unknown) => expect(e).to.be.instanceOf(BlobNotFoundError),
    );
    await writeBlobJson(b.store, 'm/absent.json', { n: 2 });
    expect(await reader.read('m/absent.json')).to.deep.equal({ n: 2 });
    expect(gets).to.deep.equal(['m/absent.json', 'm/absent.json']);
  });
});
