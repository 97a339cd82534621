import { ConfigError, type EnvReader } from '@kb/platform/config';
import { parseCidr, type OutboundPolicy } from './address-policy';

/**
 * The outbound policy an operator sets (docs/operations.md):
 *  - OUTBOUND_ALLOW_HOSTS: host names let through to private addresses (a self-hosted model);
 *  - OUTBOUND_ALLOW_CIDRS: addresses or blocks let through (`10.20.0.0/16,127.0.0.1`);
 *  - PROCESSING_ALLOW_PRIVATE_NETWORKS: every private range (development and tests only).
 */
export function outboundPolicyFromEnv(reader: EnvReader): OutboundPolicy {
  const allowHosts = reader.list('OUTBOUND_ALLOW_HOSTS');
  const allowCidrs = reader.list('OUTBOUND_ALLOW_CIDRS');
  const allowPrivate = reader.bool('PROCESSING_ALLOW_PRIVATE_NETWORKS', false);
  const bad = allowCidrs.filter((c) => !parseCidr(c));
  if (bad.length)
    throw new ConfigError([`OUTBOUND_ALLOW_CIDRS has entries that are neither an address nor a CIDR block: ${bad.join(', ')}`]);
  const badHosts = allowHosts.filter((h) => !/^[a-z0-9.-]+$/i.test(h));
  if (badHosts.length) throw new ConfigError([`OUTBOUND_ALLOW_HOSTS has entries that are not host names: ${badHosts.join(', ')}`]);
  return { allowHosts, allowCidrs, allowPrivate };
}
