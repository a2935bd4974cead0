import { ERASED_VALUE } from '../../contracts/personal-data';
import type {
  ApiTokenChangedData,
  ApiTokenIssuedData,
  ApiTokenRevokedData,
  SessionStartedData,
  UserChangedData,
  UserRegisteredData,
} from '../../contracts/events/identity';
import { documentId, READ_MODELS } from '../../contracts/read-models';
import type { ReadModelChange } from '../../contracts/read-model-changes';
import type { ProjectedEvent, Projection } from '../projection';
import { createdColumns, updatedColumns } from './common';

/** What a two-factor event changes in the user's document: devices by id (never their seeds), codes left. */
function twoFactorPatch(event: ProjectedEvent): {
  set?: Record<string, unknown>;
  unset?: string[];
  inc?: Record<string, number>;
} {
  const data = event.data as { deviceId?: string; name?: string; codeHashes?: string[] };
  const device = `twoFactorDevices.${String(data.deviceId)}`;
  switch (event.type) {
    case 'TwoFactorDeviceAdded':
      return { set: { [device]: { name: data.name, confirmed: false, addedAt: event.metadata.occurredAt } } };
    case 'TwoFactorDeviceConfirmed':
      return { set: { [`${device}.confirmed`]: true } };
    case 'TwoFactorDeviceRemoved':
      return { unset: [device] };
    case 'TwoFactorCodeUsed':
      return { set: { [`${device}.lastUsedAt`]: event.metadata.occurredAt } };
    case 'RecoveryCodesIssued':
      return { set: { recoveryCodesLeft: data.codeHashes?.length ?? 0 } };
    default:
      return { inc: { recoveryCodesLeft: -1 } };
  }
}

/**
 * Users, and credentials keyed by the SHA-256 of the token so authentication is one lookup. Password
 * hashes stay out of the users read model; the write side keeps them in the user stream.
 */
export const identityProjection: Projection = {
  name: 'identity',
  categories: ['user'],
  collections: {
    [READ_MODELS.users]: [{ name: 'tenant_email', paths: ['tenant', 'email'] }],
    [READ_MODELS.credentials]: [{ name: 'tenant_user', paths: ['tenant', 'userId'] }],
    [READ_MODELS.sessions]: [{ name: 'tenant_user', paths: ['tenant', 'userId'] }],
  },
  project(event, collection): ReadModelChange[] {
    const tenant = event.metadata.tenant;
    const position = event.position;
    switch (event.type) {
      case 'UserRegistered': {
        const { passwordHash: _secret, ...data } = event.data as UserRegisteredData;
        return [
          {
            op: 'upsert',
            collection: collection(READ_MODELS.users),
            position,
            doc: { id: documentId(tenant, data.userId), ...data, active: true, ...createdColumns(event) },
          },
        ];
      }
      case 'ApiTokenIssued': {
        const { tokenHash, ...data } = event.data as ApiTokenIssuedData;
        return [
          {
            op: 'upsert',
            collection: collection(READ_MODELS.credentials),
            position,
            doc: { id: tokenHash, kind: 'api-token', ...data, ...createdColumns(event) },
          },
        ];
      }
      case 'UserErased': {
        const { userId } = event.data as { userId: number };
        return [
          {
            op: 'patch',
            collection: collection(READ_MODELS.users),
            position,
            id: documentId(tenant, userId),
            set: {
              name: ERASED_VALUE,
              email: ERASED_VALUE,
              active: false,
              erased: true,
              ...updatedColumns(event),
            },
          },
        ];
      }
      case 'UserChanged':
      case 'UserDeactivated':
      case 'UserActivated': {
        const { userId, ...changes } = event.data as UserChangedData;
        const set = event.type === 'UserChanged' ? changes : { active: event.type === 'UserActivated' };
        return [
          {
            op: 'patch',
            collection: collection(READ_MODELS.users),
            position,
            id: documentId(tenant, userId),
            set: { ...set, ...updatedColumns(event) },
          },
        ];
      }
      case 'ApiTokenChanged': {
        const {
          tokenHash,
          userId: _userId,
          tokenId: _tokenId,
          ...changes
        } = event.data as ApiTokenChangedData;
        return [
          {
            op: 'patch',
            collection: collection(READ_MODELS.credentials),
            position,
            id: tokenHash,
            set: { ...changes, ...updatedColumns(event) },
          },
        ];
      }
      case 'ApiTokenRevoked': {
        const data = event.data as ApiTokenRevokedData;
        return [
          { op: 'delete', collection: collection(READ_MODELS.credentials), position, id: data.tokenHash },
        ];
      }
      case 'TwoFactorDeviceAdded':
      case 'TwoFactorDeviceConfirmed':
      case 'TwoFactorDeviceRemoved':
      case 'TwoFactorCodeUsed':
      case 'RecoveryCodesIssued':
      case 'RecoveryCodeUsed':
        return [
          {
            op: 'patch',
            collection: collection(READ_MODELS.users),
            position,
            id: documentId(tenant, (event.data as { userId: number }).userId),
            ...twoFactorPatch(event),
          },
        ];
      case 'TokenPriorityChanged': {
        const { userId, order } = event.data as { userId: number; order: string[] };
        return [
          {
            op: 'patch',
            collection: collection(READ_MODELS.users),
            position,
            id: documentId(tenant, userId),
            set: { tokenPriority: order },
          },
        ];
      }
      case 'SessionStarted': {
        const { sessionHash, ...data } = event.data as SessionStartedData;
        return [
          {
            op: 'upsert',
            collection: collection(READ_MODELS.sessions),
            position,
            doc: { id: sessionHash, ...data, ...createdColumns(event) },
          },
        ];
      }
      case 'SessionEnded': {
        const { sessionHash } = event.data as SessionStartedData;
        return [{ op: 'delete', collection: collection(READ_MODELS.sessions), position, id: sessionHash }];
      }
      default:
        return [];
    }
  },
};
