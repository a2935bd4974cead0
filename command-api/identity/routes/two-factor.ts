import type { Request, Router } from 'express';
import QRCode from 'qrcode';
import type { Principal } from '../../../contracts/auth';
import { PlatformError } from '../../../contracts/errors';
import { validate } from '../../../contracts/validation';
import { contextOf } from '../../../infra/http/context';
import { idParam } from '../../../infra/http/params';
import type { CommandDeps } from '../../deps';
import type { UserState } from '../domain/user';
import { totpUri } from '../totp';
import { authorizeAccount, callerOf, commandOrigin, sendResult } from '../../kit/route-context';
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
import {
  accountForTwoFactorChange,
  confirmDevice,
  enrolDevice,
  issueRecoveryCodes,
  removeDevice,
} from '../commands';

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
  const { user, stream } = await accountForTwoFactorChange(deps, principal.tenant, userId, self, password);
  return { principal, user, stream, self };
}

/** `/user/{userId}/2fa`: enrol an authenticator, confirm it, remove it, renew the recovery codes. */
export function addTwoFactorRoutes(router: Router, deps: CommandDeps): void {
  mount(router, enrolTwoFactorDevice, async (req, res) => {
    const userId = idParam(req, 'userId');
    // Changing two-factor settings asks for the password again (SE-05).
    const body = validate(enrolDeviceBody, req.body, 'body');
    const { principal, user, stream } = await ownUser(req, deps, userId, body.password);
    const { result, deviceId, secret } = await enrolDevice(
      deps,
      stream,
      body.name,
      commandOrigin(req, principal),
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
    const { result, recoveryCodes } = await confirmDevice(
      deps,
      callerOf(req, principal),
      userId,
      deviceId,
      body.code,
    );
    res.setHeader('Cache-Control', 'no-store');
    sendResult(res, 200, result, {
      id: deviceId,
      confirmed: true,
      // Shown this once, with the first device: each signs in once when the authenticator is lost.
      ...(recoveryCodes && { recoveryCodes }),
    });
  });

  mount(router, removeTwoFactorDevice, async (req, res) => {
    const userId = idParam(req, 'userId');
    const { deviceId } = validate(deviceParams, req.params, 'path');
    const body = validate(reauthenticateBody, req.body ?? {}, 'body');
    const { principal, stream, self } = await ownUser(req, deps, userId, body.password, true);
    const result = await removeDevice(deps, callerOf(req, principal), stream, deviceId, self);
    sendResult(res, 200, result, { id: deviceId, removed: true });
  });

  mount(router, renewRecoveryCodes, async (req, res) => {
    const userId = idParam(req, 'userId');
    const body = validate(reauthenticateBody, req.body ?? {}, 'body');
    const { principal, stream } = await ownUser(req, deps, userId, body.password);
    const { result, recoveryCodes } = await issueRecoveryCodes(deps, stream, commandOrigin(req, principal));
    res.setHeader('Cache-Control', 'no-store');
    sendResult(res, 200, result, { recoveryCodes });
  });
}
