import { ConfigError, EnvReader } from '@kb/platform/config';
import { outboundPolicyFromEnv } from './outbound-config';

describe('outboundPolicyFromEnv', () => {
  it('is strict by default', () => {
    expect(outboundPolicyFromEnv(new EnvReader({}))).toEqual({ allowHosts: [], allowCidrs: [], allowPrivate: false });
  });

  it('reads the allow-lists and maps the private-network switch', () => {
    const env = {
      OUTBOUND_ALLOW_HOSTS: 'llm.corp.internal, tei.corp.internal',
      OUTBOUND_ALLOW_CIDRS: '10.20.0.0/16,127.0.0.1',
      PROCESSING_ALLOW_PRIVATE_NETWORKS: 'true',
    };
    expect(outboundPolicyFromEnv(new EnvReader(env))).toEqual({
      allowHosts: ['llm.corp.internal', 'tei.corp.internal'],
      allowCidrs: ['10.20.0.0/16', '127.0.0.1'],
      allowPrivate: true,
    });
  });

  it('refuses entries it cannot read, naming them', () => {
    expect(() => outboundPolicyFromEnv(new EnvReader({ OUTBOUND_ALLOW_CIDRS: '10.0.0.0/8,10.0.0.0/40,intranet' }))).toThrow(ConfigError);
    expect(() => outboundPolicyFromEnv(new EnvReader({ OUTBOUND_ALLOW_CIDRS: 'intranet' }))).toThrow(/intranet/);
    expect(() => outboundPolicyFromEnv(new EnvReader({ OUTBOUND_ALLOW_HOSTS: 'http://llm/' }))).toThrow(/http:\/\/llm\//);
  });
});
