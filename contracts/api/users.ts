/** Users of a system, their private API tokens and their two-factor devices. */
import { z } from 'zod';
import { modulePermissionsSchema } from '../events/identity';
import { operation } from './operation';
import { rfc3339Moment, rfc3339Time } from '../times';
import {
  canonicalUuid,
  entityId,
  erasureBody,
  etagHeader,
  idAsText,
  listQuery,
  locationHeader,
  pageOf,
  pathIds,
  READ_ERRORS,
  WRITE_ERRORS,
} from './shared';

const name = z
  .string()
  .trim()
  .min(1, 'must not be empty')
  .max(200, 'must be at most 200 characters')
  .meta({ description: 'The name shown to others.' });
const password = z
  .string()
  .min(12, 'must be at least 12 characters')
  .max(1024, 'must be at most 1024 characters')
  .meta({ description: 'At least 12 characters.' });
const role = z.enum(['admin', 'member']).meta({ description: 'Administrators have every right.' });
const permissions = modulePermissionsSchema.meta({
  id: 'Permissions',
  description:
    'Rights per resource family (`record`, `space`, `subscription`, `*`…): operations `create`, `read`, `update`, `delete`.',
  example: { record: ['read', 'update'], space: ['read'] },
});

export const createUserBody = z
  .strictObject({
    email: z
      .email()
      .max(254)
      .transform((email) => email.toLowerCase())
      .meta({ description: 'Unique in the system; stored in lower case.' }),
    name,
    role: role.default('member'),
    password: password
      .optional()
      .meta({ description: 'Without one the user signs in by a social provider only.' }),
    permissions: permissions
      .nullable()
      .optional()
      .meta({ description: "A member's rights per family; absent or null: every family." }),
  })
  .meta({ id: 'UserCreate' });
export const updateUserBody = z
  .strictObject({
    name: name.optional(),
    role: role.optional(),
    permissions: permissions.nullable().optional(),
  })
  .meta({ id: 'UserUpdate' });
export const setPasswordBody = z
  .strictObject({
    password,
    currentPassword: z
      .string()
      .max(1024)
      .optional()
      .meta({ description: 'Required when users change their own password.' }),
  })
  .meta({ id: 'PasswordChange' });

const userCore = {
  id: entityId,
  email: z.string(),
  name: z.string(),
  role: z.string(),
  active: z.boolean(),
  permissions: modulePermissionsSchema.nullable(),
};
const userWritten = z.object(userCore).meta({ id: 'UserWritten' });
const user = z.object({ ...userCore, createdAt: z.string(), updatedAt: z.string() }).meta({ id: 'User' });
/** A member of a team as its list shows it. */
export const teamMember = z
  .object({ id: entityId, email: z.string(), name: z.string(), role: z.string() })
  .meta({ id: 'TeamMember' });

const userPath = pathIds({ userId: 'The user.' });
const userAnswer = { description: 'The user.', schema: userWritten, headers: etagHeader };

export const listUsers = operation({
  operationId: 'listUsers',
  method: 'get',
  path: '/user',
  tag: 'users',
  summary: "List the system's users (administrators)",
  query: listQuery,
  responses: { 200: { description: 'A page of users.', schema: pageOf(user, 'UserPage') }, ...READ_ERRORS },
  security: 'token',
});
export const getUser = operation({
  operationId: 'getUser',
  method: 'get',
  path: '/user/{userId}',
  tag: 'users',
  summary: 'Read a user (the user themselves or an administrator)',
  params: userPath,
  responses: { 200: { description: 'The user.', schema: user, headers: etagHeader }, ...READ_ERRORS },
  security: 'token',
});
export const createUser = operation({
  operationId: 'createUser',
  method: 'post',
  path: '/user',
  tag: 'users',
  summary: 'Create a user (administrators)',
  body: { schema: createUserBody, example: { email: 'ada@example.com', name: 'Ada', role: 'member' } },
  responses: {
    201: { ...userAnswer, description: 'The created user.', headers: { ...locationHeader, ...etagHeader } },
    ...WRITE_ERRORS,
  },
  security: 'token',
});
export const updateUser = operation({
  operationId: 'updateUser',
  method: 'put',
  path: '/user/{userId}',
  tag: 'users',
  summary: "Change a user's name, role or rights (administrators)",
  params: userPath,
  body: { schema: updateUserBody },
  responses: { 200: userAnswer, ...WRITE_ERRORS },
  security: 'token',
});
export const deactivateUser = operation({
  operationId: 'deactivateUser',
  method: 'post',
  path: '/user/{userId}/deactivate',
  tag: 'users',
  summary: 'Deactivate a user: every session, token and OAuth grant stops working',
  params: userPath,
  responses: { 200: userAnswer, ...WRITE_ERRORS },
  security: 'token',
});
export const eraseUserBody = erasureBody('user', 'UserErase');
export const eraseUser = operation({
  operationId: 'eraseUser',
  method: 'post',
  path: '/user/{userId}/erase',
  tag: 'users',
  summary: "Erase a user's profile data for good (administrators)",
  description:
    "Destroys the user's data key, so their name and email read as `[erased]` everywhere (the users list, events, replays, rebuilt read models), deactivates them for good (every session, token and OAuth grant stops working) and frees their email address. Who they were in the audit trail stays as their id. Erasing again answers the same; administrators cannot erase themselves.",
  params: userPath,
  body: { schema: eraseUserBody },
  responses: { 200: userAnswer, ...WRITE_ERRORS },
  security: 'token',
});
export const activateUser = operation({
  operationId: 'activateUser',
  method: 'post',
  path: '/user/{userId}/activate',
  tag: 'users',
  summary: 'Activate a deactivated user (revoked credentials stay revoked)',
  params: userPath,
  responses: { 200: userAnswer, ...WRITE_ERRORS },
  security: 'token',
});
export const setUserPassword = operation({
  operationId: 'setUserPassword',
  method: 'put',
  path: '/user/{userId}/password',
  tag: 'users',
  summary: 'Set a password (administrators) or change your own (with the current one)',
  description: "The account's other sessions end and its OAuth grants are revoked.",
  params: userPath,
  body: { schema: setPasswordBody },
  responses: {
    200: {
      description: 'The password was changed.',
      schema: z.object({ id: entityId, passwordChanged: z.literal(true) }).meta({ id: 'PasswordChanged' }),
      headers: etagHeader,
    },
    ...WRITE_ERRORS,
  },
  security: 'token',
});

// API tokens

const tokenName = z
  .string()
  .trim()
  .min(1, 'must not be empty')
  .max(200, 'must be at most 200 characters')
  .meta({ description: 'What the token is for.' });
const expiresAt = rfc3339Time
  .refine((value) => rfc3339Moment(value)!.getTime() > Date.now(), 'must be in the future')
  .transform((value) => rfc3339Moment(value)!.toISOString())
  .meta({ description: 'When it stops working (ISO 8601, in the future); null: never.' });
export const createTokenBody = z
  .strictObject({
    name: tokenName,
    permissions: permissions
      .nullable()
      .optional()
      .meta({ description: "Per-family rights; absent or null: all of its owner's (and never more)." }),
    expiresAt: expiresAt.nullable().optional(),
  })
  .meta({ id: 'TokenCreate' });
export const updateTokenBody = z
  .strictObject({
    name: tokenName.optional(),
    permissions: permissions.nullable().optional(),
    expiresAt: expiresAt.nullable().optional(),
  })
  .meta({ id: 'TokenUpdate' });
/** A token id in the path (a user's token is named by its UUID). */
export const tokenParams = z.object({
  userId: idAsText('The user.'),
  tokenId: canonicalUuid('a token id').meta({ description: 'The token.' }),
});

const tokenShown = {
  id: z.string(),
  userId: entityId,
  name: z.string(),
  prefix: z.string().meta({ description: 'The start of the value, to recognise it.' }),
  last4: z.string().meta({ description: 'The last four characters of the value.' }),
  permissions: modulePermissionsSchema.nullable(),
  expiresAt: z.string().nullable(),
};
const token = z
  .object({
    ...tokenShown,
    bootstrap: z.boolean().meta({ description: 'The bootstrap admin token (`ADMIN_TOKEN`).' }),
    createdAt: z.string(),
    updatedAt: z.string(),
    lastUsedAt: z.string().nullable(),
    calls: z.number().int().meta({ description: 'API calls made with it.' }),
  })
  .meta({ id: 'Token' });
const userTokensPath = pathIds({ userId: 'The user.' });

export const listTokens = operation({
  operationId: 'listTokens',
  method: 'get',
  path: '/auth/{userId}/token',
  tag: 'api tokens',
  summary: "List a user's API tokens (never their values)",
  params: userTokensPath,
  query: listQuery,
  responses: {
    200: { description: 'A page of tokens.', schema: pageOf(token, 'TokenPage') },
    ...READ_ERRORS,
  },
  security: 'token',
});
export const getToken = operation({
  operationId: 'getToken',
  method: 'get',
  path: '/auth/{userId}/token/{tokenId}',
  tag: 'api tokens',
  summary: 'Read an API token (never its value)',
  params: tokenParams,
  responses: { 200: { description: 'The token.', schema: token }, ...READ_ERRORS },
  security: 'token',
});
export const createToken = operation({
  operationId: 'createToken',
  method: 'post',
  path: '/auth/{userId}/token',
  tag: 'api tokens',
  summary: 'Create an API token: its value is in this answer only',
  description:
    'Only a hash is kept: the value (`token`) is shown once. A repeat with the same `Idempotency-Key` is a 409, ' +
    'never a second token.',
  params: userTokensPath,
  body: { schema: createTokenBody, example: { name: 'CI', permissions: { record: ['read'] } } },
  responses: {
    201: {
      description: 'The token, with its value.',
      schema: z
        .object({ ...tokenShown, token: z.string().meta({ description: 'The value: shown this once.' }) })
        .meta({ id: 'TokenIssued' }),
      headers: { ...locationHeader, ...etagHeader },
    },
    ...WRITE_ERRORS,
  },
  security: 'token',
});
export const updateToken = operation({
  operationId: 'updateToken',
  method: 'put',
  path: '/auth/{userId}/token/{tokenId}',
  tag: 'api tokens',
  summary: "Change an API token's name, rights or expiry",
  params: tokenParams,
  body: { schema: updateTokenBody },
  responses: {
    200: {
      description: 'What changed.',
      schema: z
        .object({
          id: z.string(),
          userId: entityId,
          name: z.string().optional(),
          permissions: modulePermissionsSchema.nullable().optional(),
          expiresAt: z.string().nullable().optional(),
        })
        .meta({ id: 'TokenChanged' }),
      headers: etagHeader,
    },
    ...WRITE_ERRORS,
  },
  security: 'token',
});
export const revokeToken = operation({
  operationId: 'revokeToken',
  method: 'delete',
  path: '/auth/{userId}/token/{tokenId}',
  tag: 'api tokens',
  summary: 'Revoke an API token',
  params: tokenParams,
  responses: {
    200: {
      description: 'The token was revoked.',
      schema: z
        .object({ id: z.string(), userId: entityId, revoked: z.literal(true) })
        .meta({ id: 'TokenRevoked' }),
      headers: etagHeader,
    },
    ...WRITE_ERRORS,
  },
  security: 'token',
});

// Two-factor devices

export const enrolDeviceBody = z
  .strictObject({
    name: z
      .string()
      .trim()
      .min(1)
      .max(100)
      .default('Authenticator')
      .meta({ description: 'The device name.' }),
    password: z.string().max(1024).meta({ description: 'The account password, asked again.' }),
  })
  .meta({ id: 'TwoFactorEnrol' });
export const confirmDeviceBody = z
  .strictObject({ code: z.string().max(16).meta({ description: 'A current code of the authenticator.' }) })
  .meta({ id: 'TwoFactorConfirm' });
export const reauthenticateBody = z
  .strictObject({
    password: z.string().max(1024).optional().meta({
      description: 'The account password (not needed when an administrator removes a lost device).',
    }),
  })
  .meta({ id: 'Reauthenticate' });
export const deviceParams = z.object({
  userId: idAsText('The user.'),
  deviceId: canonicalUuid('a device id').meta({ description: 'The device.' }),
});
const recoveryCodes = z
  .array(z.string())
  .meta({ description: 'Single-use codes for when the authenticator is lost: shown this once.' });

export const getTwoFactor = operation({
  operationId: 'getTwoFactor',
  method: 'get',
  path: '/user/{userId}/2fa',
  tag: 'two-factor',
  summary: "A user's two-factor state: devices and recovery codes left",
  params: userPath,
  responses: {
    200: {
      description: 'The state.',
      schema: z
        .object({
          enabled: z.boolean(),
          devices: z.array(
            z.object({
              id: z.string(),
              name: z.string(),
              confirmed: z.boolean(),
              addedAt: z.string(),
              lastUsedAt: z.string().nullable(),
            }),
          ),
          recoveryCodesLeft: z.number().int(),
        })
        .meta({ id: 'TwoFactorState' }),
    },
    ...READ_ERRORS,
  },
  security: 'token',
});
export const enrolTwoFactorDevice = operation({
  operationId: 'enrolTwoFactorDevice',
  method: 'post',
  path: '/user/{userId}/2fa',
  tag: 'two-factor',
  summary: 'Add an authenticator (TOTP): its secret and QR code are in this answer only',
  params: userPath,
  body: { schema: enrolDeviceBody },
  responses: {
    201: {
      description: 'The device, to be confirmed with a code.',
      schema: z
        .object({
          id: z.string(),
          name: z.string(),
          confirmed: z.literal(false),
          secret: z.string(),
          otpauthUri: z.string(),
          qrCode: z.string().meta({ description: 'A PNG data URL of `otpauthUri`.' }),
        })
        .meta({ id: 'TwoFactorEnrolment' }),
      headers: etagHeader,
    },
    ...WRITE_ERRORS,
  },
  security: 'token',
});
export const confirmTwoFactorDevice = operation({
  operationId: 'confirmTwoFactorDevice',
  method: 'post',
  path: '/user/{userId}/2fa/{deviceId}/confirm',
  tag: 'two-factor',
  summary: 'Confirm an authenticator with a code (the first one also gets recovery codes)',
  params: deviceParams,
  body: { schema: confirmDeviceBody },
  responses: {
    200: {
      description: 'The device is confirmed.',
      schema: z
        .object({ id: z.string(), confirmed: z.literal(true), recoveryCodes: recoveryCodes.optional() })
        .meta({ id: 'TwoFactorConfirmed' }),
      headers: etagHeader,
    },
    ...WRITE_ERRORS,
  },
  security: 'token',
});
export const removeTwoFactorDevice = operation({
  operationId: 'removeTwoFactorDevice',
  method: 'delete',
  path: '/user/{userId}/2fa/{deviceId}',
  tag: 'two-factor',
  summary: 'Remove an authenticator',
  params: deviceParams,
  body: { schema: reauthenticateBody, required: false },
  responses: {
    200: {
      description: 'The device was removed.',
      schema: z.object({ id: z.string(), removed: z.literal(true) }).meta({ id: 'TwoFactorDeviceRemoved' }),
      headers: etagHeader,
    },
    ...WRITE_ERRORS,
  },
  security: 'token',
});
export const renewRecoveryCodes = operation({
  operationId: 'renewRecoveryCodes',
  method: 'post',
  path: '/user/{userId}/2fa/recovery-codes',
  tag: 'two-factor',
  summary: 'Replace the recovery codes',
  params: userPath,
  body: { schema: reauthenticateBody, required: false },
  responses: {
    200: {
      description: 'The new codes (the old ones stop working).',
      schema: z.object({ recoveryCodes }).meta({ id: 'RecoveryCodes' }),
      headers: etagHeader,
    },
    ...WRITE_ERRORS,
  },
  security: 'token',
});

export const USER_OPERATIONS = [
  listUsers,
  getUser,
  createUser,
  updateUser,
  deactivateUser,
  eraseUser,
  activateUser,
  setUserPassword,
  listTokens,
  getToken,
  createToken,
  updateToken,
  revokeToken,
  getTwoFactor,
  enrolTwoFactorDevice,
  confirmTwoFactorDevice,
  removeTwoFactorDevice,
  renewRecoveryCodes,
];
