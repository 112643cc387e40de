import { expect } from 'chai';
import SEARCH_ATTRIBUTES from '../../core/runtime/search-attributes.json';
import { SEARCH_ATTRIBUTE_KEYS } from '../../core/runtime/search-attributes';

describe('search attributes (core/runtime/search-attributes.ts)', () => {
  it('has a typed Keyword key for every attribute the dev server registers, and no other', () => {
    expect(SEARCH_ATTRIBUTE_KEYS.map((k) => [k.name, k.type])).to.deep.equal(
      Object.entries(SEARCH_ATTRIBUTES).map(([name, type]) => [name, type.toUpperCase()]),
    );
  });
});
