import { createHash, randomBytes } from 'node:crypto';
import type { Request, Router } from 'express';
import QRCode from 'qrcode';
import type { Principal } from '../../../contracts/auth';
import { PlatformError } from '../../../contracts/errors';
import { uuidV5 } from '../../../contracts/ids';
import { streamName } from '../../../contracts/streams';
import { validate } from '../../../contracts/validation';
import { contextOf } from '../../../infra/http/context';
import { idParam } from '../../../infra/http/params';
import type { CommandDeps } from '../../deps';
import { userDecider, type UserState } from '../domain/user';
import { verifyPassword } from '../passwords';
import { newTotpSecret, totpUri, verifyTotp } from '../totp';
import { authorizeAccount, commandContext, sendResult } from '../../kit/route-context';
import {
  confirmDeviceBody,
  confirmTwoFactorDevice,
  deviceParams,
  enrolDeviceBody,
  enrolTwoFactorDevice,
  reauthenticateBody,
  removeTwoFactorDevice,
  renewRecoveryCodes,
} from '../../../contracts/api/users';
import { mount } from '../../../infra/http/operations';
import { keptSession } from './users';
import { revokeGrantsOf } from '../../oauth/commands';

const RECOVERY_CODES = 10;
const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';

/** `xxxx-xxxx-xxxx-xxxx`: 80 random bits; compared case- and dash-insensitively. */
function newRecoveryCode(): string {
  const bytes = randomBytes(16);
  const text = [...bytes].map((byte) => BASE32[byte % 32]).join('');
  return text.match(/.{4}/g)!.join('-');
}

export function recoveryCodeHash(code: string): string {
  return createHash('sha256')
    .update(code.toLowerCase().replace(/[^a-z2-7]/g, ''))
    .digest('hex');
}

function newRecoveryCodes(): { codes: string[]; hashes: string[] } {
  const codes = Array.from({ length: RECOVERY_CODES }, newRecoveryCode);
  return { codes, hashes: codes.map(recoveryCodeHash) };
}

/**
 * Two-factor settings are the user's own; an administrator may only remove a lost device. The routes read
 * `userId` from the path before the body, so a malformed id is the error a request gets first.
 */
async function ownUser(
  req: Request,
  deps: CommandDeps,
  userId: number,
  password: string | undefined,
  allowAdmin = false,
): Promise<{ principal: Principal; user: UserState; stream: string; self: boolean }> {
  const refusal = 'only the user changes their two-factor settings';
  const { principal, self } = authorizeAccount(req, userId, 'user', 'update', refusal);
  if (!self && !allowAdmin) throw new PlatformError('forbidden', refusal);
  const stream = streamName('user', principal.tenant, userId);
  const { state } = await deps.handler.load(stream, userDecider);
  if (state.status !== 'active') throw new PlatformError('not_found', `user ${userId} not found`);
  if (self) {
    if (state.passwordHash === null)
      throw new PlatformError(
        'conflict',
        'two-factor authentication protects password sign-in: set a password first',
      );
    if (password === undefined || !(await verifyPassword(password, state.passwordHash)))
      throw new PlatformError('forbidden', 'the password is missing or wrong');
  }
  return { principal, user: state, stream, self };
}

/** `/user/{userId}/2fa`: enrol an authenticator, confirm it, remove it, renew the recovery codes. */
export function addTwoFactorRoutes(router: Router, deps: CommandDeps): void {
  mount(router, enrolTwoFactorDevice, async (req, res) => {
    const userId = idParam(req, 'userId');
    // Changing two-factor settings asks for the password again (SE-05).
    const body = validate(enrolDeviceBody, req.body, 'body');
    const { principal, user, stream } = await ownUser(req, deps, userId, body.password);
    const secret = newTotpSecret();
    const commandId = deps.newCommandId();
    const deviceId = uuidV5(`2fa-device:${commandId}`);
    const result = await deps.handler.handle(
      stream,
      userDecider,
      { kind: 'AddTwoFactorDevice', deviceId, name: body.name, sealedSecret: deps.sealer.seal(secret) },
      commandContext(req, principal, commandId),
    );
    const otpauthUri = totpUri(`Records Platform (${contextOf(req).tenant})`, user.email, secret);
    res.setHeader('Cache-Control', 'no-store');
    sendResult(res, 201, result, {
      id: deviceId,
      name: body.name,
      confirmed: false,
      secret,
      otpauthUri,
      qrCode: await QRCode.toDataURL(otpauthUri, { errorCorrectionLevel: 'M' }),
    });
  });

  mount(router, confirmTwoFactorDevice, async (req, res) => {
    const userId = idParam(req, 'userId');
    const { deviceId } = validate(deviceParams, req.params, 'path');
    const body = validate(confirmDeviceBody, req.body, 'body');
    const refusal = 'only the user confirms their authenticator';
    const { principal, self } = authorizeAccount(req, userId, 'user', 'update', refusal);
    if (!self) throw new PlatformError('forbidden', refusal);
    const stream = streamName('user', principal.tenant, userId);
    const { state } = await deps.handler.load(stream, userDecider);
    const device = state.twoFactor.devices[deviceId];
    if (!device) throw new PlatformError('not_found', `user ${userId} has no device ${deviceId}`);
    const timeStep = verifyTotp(
      deps.sealer.open(device.sealedSecret),
      body.code,
      -1,
      Math.floor(Date.now() / 1000),
    );
    if (timeStep === null)
      throw new PlatformError(
        'validation_failed',
        'the code does not match: check the device clock and try the next code',
      );
    const recovery = newRecoveryCodes();
    const result = await deps.handler.handle(
      stream,
      userDecider,
      {
        kind: 'ConfirmTwoFactorDevice',
        deviceId,
        timeStep,
        recoveryCodeHashes: recovery.hashes,
        ...keptSession(principal, true),
      },
      commandContext(req, principal, deps.newCommandId()),
    );
    await revokeGrantsOf(deps, principal.tenant, userId, () =>
      commandContext(req, principal, deps.newCommandId()),
    );
    const issued = result.state.twoFactor.recoveryCodeHashes[0] === recovery.hashes[0];
    res.setHeader('Cache-Control', 'no-store');
    sendResult(res, 200, result, {
      id: deviceId,
      confirmed: true,
      // Shown this once, with the first device: each signs in once when the authenticator is lost.
      ...(issued && { recoveryCodes: recovery.codes }),
    });
  });

  mount(router, removeTwoFactorDevice, async (req, res) => {
    const userId = idParam(req, 'userId');
    const { deviceId } = validate(deviceParams, req.params, 'path');
    const body = validate(reauthenticateBody, req.body ?? {}, 'body');
    const { principal, stream, self } = await ownUser(req, deps, userId, body.password, true);
    const result = await deps.handler.handle(
      stream,
      userDecider,
      { kind: 'RemoveTwoFactorDevice', deviceId, ...keptSession(principal, self) },
      commandContext(req, principal, deps.newCommandId()),
    );
    await revokeGrantsOf(deps, principal.tenant, result.state.userId, () =>
      commandContext(req, principal, deps.newCommandId()),
    );
    sendResult(res, 200, result, { id: deviceId, removed: true });
  });

  mount(router, renewRecoveryCodes, async (req, res) => {
    const userId = idParam(req, 'userId');
    const body = validate(reauthenticateBody, req.body ?? {}, 'body');
    const { principal, stream } = await ownUser(req, deps, userId, body.password);
    const recovery = newRecoveryCodes();
    const result = await deps.handler.handle(
      stream,
      userDecider,
      { kind: 'IssueRecoveryCodes', codeHashes: recovery.hashes },
      commandContext(req, principal, deps.newCommandId()),
    );
    res.setHeader('Cache-Control', 'no-store');
    sendResult(res, 200, result, { recoveryCodes: recovery.codes });
  });
}
