import { expect } from 'chai';
import { formBool } from '../../api/schemas/form';

describe('multipart fields: booleans', () => {
  const field = formBool(false);

  it('reads true/false in any case (Python clients send "True"), 1/0, and the default when absent or empty', () => {
    for (const v of ['true', 'True', 'TRUE', '1', true]) expect(field.parse(v), String(v)).to.equal(true);
    for (const v of ['false', 'False', 'FALSE', '0', false]) expect(field.parse(v), String(v)).to.equal(false);
    expect(field.parse(undefined)).to.equal(false);
    expect(formBool(true).parse('')).to.equal(true);
  });

  it('refuses anything else instead of guessing', () => {
    for (const v of ['yes', 'on', 'truth', '2', 'none']) expect(field.safeParse(v).success, v).to.equal(false);
  });
});
