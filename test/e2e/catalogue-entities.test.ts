import { json, startPlatform, type Entity, type Page, type TestPlatform } from '../support/platform';

jest.setTimeout(60_000);

let platform: TestPlatform;

async function create(path: string, body: unknown): Promise<Entity> {
  const response = await platform.call('POST', path, { body });
  expect(response.status).toBe(201);
  return json<Entity>(response);
}

async function statusOf(method: string, path: string, body?: unknown): Promise<number> {
  const response = await platform.call(method, path, body === undefined ? {} : { body });
  await response.arrayBuffer();
  return response.status;
}

beforeAll(async () => {
  platform = await startPlatform();
});

afterAll(async () => {
  await platform.stop();
});

test('categories: a tree without cycles; read, list, change, delete', async () => {
  const root = await create('/category', { name: 'Products' });
  const child = await create('/category', { name: 'Hardware', parentId: root.id });
  expect(child).toMatchObject({ name: 'Hardware', parentId: root.id, description: null });
  expect(await json(await platform.call('GET', `/category/${child.id}`))).toMatchObject({
    id: child.id,
    parentId: root.id,
  });
  const children = await json<Page>(await platform.call('GET', `/category?filter=parentId=${root.id}`));
  expect(children.items.map((category) => category.id)).toEqual([child.id]);

  expect(await statusOf('PUT', `/category/${root.id}`, { parentId: child.id })).toBe(400);
  expect(await statusOf('PUT', `/category/${root.id}`, { parentId: root.id })).toBe(400);
  expect(await statusOf('POST', '/category', { name: 'Orphan', parentId: 99999 })).toBe(400);
  expect(await statusOf('PUT', `/category/${child.id}`, { description: 'Things' })).toBe(200);
  expect(await statusOf('DELETE', `/category/${child.id}`)).toBe(200);
  expect(await statusOf('GET', `/category/${child.id}`)).toBe(404);
});

test('teams and their users', async () => {
  const team = await create('/team', { name: 'Sales', userIds: [1] });
  expect(team).toMatchObject({ name: 'Sales', userIds: [1] });
  const users = await json<Page>(await platform.call('GET', `/team/${team.id}/user`));
  expect(users.items).toEqual([expect.objectContaining({ id: 1, role: 'admin' })]);
  expect(await statusOf('POST', '/team', { name: 'Ghosts', userIds: [4242] })).toBe(400);
  expect(await statusOf('POST', '/team', { name: 'Twice', userIds: [1, 1] })).toBe(400);
  expect(await statusOf('PUT', `/team/${team.id}`, { userIds: [] })).toBe(200);
  const none = await json<Page>(await platform.call('GET', `/team/${team.id}/user`));
  expect(none.items).toEqual([]);
  expect(await statusOf('GET', '/team/99999/user')).toBe(404);
});

test('menus: items open a module or an address', async () => {
  const space = await create('/space', { name: 'Menus' });
  const module = await create('/module', { spaceId: space.id, name: 'Deals' });
  const menu = await create('/menu', {
    name: 'Main',
    items: [
      { label: 'Deals', moduleId: module.id },
      { label: 'Help', url: 'https://example.com/help' },
    ],
  });
  expect(menu).toMatchObject({
    name: 'Main',
    position: 0,
    items: [{ moduleId: module.id }, { url: 'https://example.com/help' }],
  });
  expect(await statusOf('POST', '/menu', { name: 'x', items: [{ label: 'Nothing' }] })).toBe(400);
  expect(await statusOf('POST', '/menu', { name: 'x', items: [{ label: 'Gone', moduleId: 99999 }] })).toBe(
    400,
  );
  expect(
    await statusOf('POST', '/menu', { name: 'x', items: [{ label: 'Bad', url: 'javascript:alert(1)' }] }),
  ).toBe(400);
  expect(await statusOf('PUT', '/menu', { id: menu.id, position: 3 })).toBe(200);
  const menus = await json<Page>(await platform.call('GET', '/menu?order=position;DESC'));
  expect(menus.items[0]).toMatchObject({ id: menu.id, position: 3 });
});

test('field groups: fields of their own module, read as inputs in the group’s order', async () => {
  const space = await create('/space', { name: 'Forms' });
  const module = await create('/module', { spaceId: space.id, name: 'Contacts' });
  const other = await create('/module', { spaceId: space.id, name: 'Other' });
  const email = await create('/field', { moduleId: module.id, name: 'Email', type: 'email' });
  const phone = await create('/field', { moduleId: module.id, name: 'Phone', type: 'phone' });
  const foreign = await create('/field', { moduleId: other.id, name: 'Foreign', type: 'text' });

  const group = await create('/field-group', {
    moduleId: module.id,
    name: 'Reach',
    fieldIds: [phone.id, email.id],
  });
  expect(group).toMatchObject({ moduleId: module.id, fieldIds: [phone.id, email.id], position: 0 });
  const inputs = await json<{ items: Entity[] }>(
    await platform.call('GET', `/field-group/${group.id}/input`),
  );
  expect(inputs.items.map((field) => [field.id, field.type])).toEqual([
    [phone.id, 'phone'],
    [email.id, 'email'],
  ]);
  expect(
    await statusOf('POST', '/field-group', { moduleId: module.id, name: 'x', fieldIds: [foreign.id] }),
  ).toBe(400);
  expect(await statusOf('PUT', `/field-group/${group.id}`, { fieldIds: [foreign.id] })).toBe(400);
  expect(await statusOf('PUT', `/field-group/${group.id}`, { moduleId: other.id })).toBe(400);
  expect(await statusOf('PUT', `/field-group/${group.id}`, { fieldIds: [email.id] })).toBe(200);
  const listed = await json<Page>(await platform.call('GET', `/field-group?filter=moduleId=${module.id}`));
  expect(listed.items).toEqual([expect.objectContaining({ id: group.id, fieldIds: [email.id] })]);
  expect(await statusOf('DELETE', `/field-group/${group.id}`)).toBe(200);
  expect(await statusOf('GET', `/field-group/${group.id}/input`)).toBe(404);
});
