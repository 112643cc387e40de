import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ConfigError, loadConfig } from '../../core/config/config';
import { temporalConnectionOptions } from '../../core/runtime/temporal-connection';

describe('Temporal connection options', () => {
  let dir: string;
  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tls-opts-'));
    fs.writeFileSync(path.join(dir, 'client.pem'), 'CLIENT CERT');
    fs.writeFileSync(path.join(dir, 'client.key'), 'CLIENT KEY');
    fs.writeFileSync(path.join(dir, 'ca.pem'), 'CA CERT');
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const file = (n: string) => path.join(dir, n);

  it('connects in plain text to the dev server by default', () => {
    expect(temporalConnectionOptions(loadConfig({}))).to.deep.equal({ address: '127.0.0.1:7233' });
  });

  it('turns TLS on with TEMPORAL_TLS or an API key (Temporal Cloud), without customisation', () => {
    expect(temporalConnectionOptions(loadConfig({ TEMPORAL_ADDRESS: 'x:7233', TEMPORAL_TLS: 'true' }))).to.deep.equal({
      address: 'x:7233',
      tls: {},
    });
    const cloud = temporalConnectionOptions(
      loadConfig({ TEMPORAL_ADDRESS: 'ns.acct.tmprl.cloud:7233', TEMPORAL_API_KEY: 'k' }),
    );
    expect(cloud).to.deep.equal({ address: 'ns.acct.tmprl.cloud:7233', tls: {}, apiKey: 'k' });
  });

  it('maps the mTLS files to the SDK TLSConfig shape (client pair, root CA, SNI override)', () => {
    const o = temporalConnectionOptions(
      loadConfig({
        TEMPORAL_ADDRESS: 'temporal.internal:7233',
        TEMPORAL_TLS_CERT: file('client.pem'),
        TEMPORAL_TLS_KEY: file('client.key'),
        TEMPORAL_TLS_CA: file('ca.pem'),
        TEMPORAL_TLS_SERVER_NAME: 'frontend.temporal',
      }),
    );
    expect(o.address).to.equal('temporal.internal:7233');
    expect(Buffer.from(o.tls!.clientCertPair!.crt).toString()).to.equal('CLIENT CERT');
    expect(Buffer.from(o.tls!.clientCertPair!.key).toString()).to.equal('CLIENT KEY');
    expect(Buffer.from(o.tls!.serverRootCACertificate!).toString()).to.equal('CA CERT');
    expect(o.tls!.serverNameOverride).to.equal('frontend.temporal');
    expect(o).not.to.have.property('apiKey');
  });

  it('a private CA alone turns TLS on without a client pair', () => {
    const o = temporalConnectionOptions(loadConfig({ TEMPORAL_TLS_CA: file('ca.pem') }));
    expect(Object.keys(o.tls!)).to.deep.equal(['serverRootCACertificate']);
  });

  it('refuses a certificate without its key, and names an unreadable file by variable and path only', () => {
    expect(() => loadConfig({ TEMPORAL_TLS_CERT: file('client.pem') })).to.throw(
      ConfigError,
      /TEMPORAL_TLS_CERT and TEMPORAL_TLS_KEY/,
    );
    expect(() => loadConfig({ TEMPORAL_TLS_KEY: file('client.key') })).to.throw(
      ConfigError,
      /TEMPORAL_TLS_CERT and TEMPORAL_TLS_KEY/,
    );
    const missing = file('nope.pem');
    const config = loadConfig({ TEMPORAL_TLS_CERT: file('client.pem'), TEMPORAL_TLS_KEY: missing });
    expect(() => temporalConnectionOptions(config)).to.throw(
      ConfigError,
      `TEMPORAL_TLS_KEY: cannot read ${missing} (ENOENT)`,
    );
  });
});
