// Issue 10 item 13 and issue 11: the OpenAPI document shows the real body of `POST /messages` and
// `POST /groups/{id}/send`, one shape per message type keyed on `type`, from the same schemas that
// validation runs on; and a body the document describes is accepted by validation.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { noStoreAvailable, startGateway, type TestGateway } from '../helpers/gateway.js';
import { MESSAGE_TYPES, validateSendRequest } from '../../src/messages/validate.js';

describe.skipIf(noStoreAvailable)('the send bodies in the OpenAPI document', () => {
  let gw: TestGateway;
  let doc: any;
  beforeAll(async () => {
    gw = await startGateway();
    doc = (await gw.request('GET', '/openapi.json', undefined, null)).body;
  });
  afterAll(() => gw?.close());

  const bodyOf = (path: string) => doc.paths[path].post.requestBody;

  it.each([['/messages'], ['/groups/{id}/send']])('%s has a JSON body of one shape per type', (path) => {
    const requestBody = bodyOf(path);
    expect(requestBody).toBeDefined();
    const schema = requestBody.content['application/json'].schema;
    expect(schema.discriminator).toEqual({ propertyName: 'type' });
    expect(schema.oneOf.map((shape: any) => shape.properties.type.enum[0])).toEqual([...MESSAGE_TYPES]);
    for (const shape of schema.oneOf) {
      expect(shape.required).toEqual(expect.arrayContaining(['type', 'params']));
      expect(Object.keys(shape.properties.params.properties).length).toBeGreaterThan(0);
    }
    expect(doc.paths[path].post['x-body']).toBeUndefined();
  });

  it('shows each type’s params, required fields and limits', () => {
    const shapes = Object.fromEntries(
      bodyOf('/messages').content['application/json'].schema.oneOf.map((shape: any) => [
        shape.properties.type.enum[0],
        shape,
      ]),
    );
    expect(shapes.chat.required).toEqual(expect.arrayContaining(['device', 'receiver', 'type', 'params']));
    expect(shapes.chat.properties.params.required).toEqual(['text']);
    expect(shapes.chat.properties.params.properties.text.description).toContain('4096');
    expect(shapes.image.properties.params.properties.image.required).toEqual(['url']);
    expect(shapes.file.properties.params.required).toEqual(['document']);
    expect(shapes.list.properties.params.properties.sections.maxItems).toBe(10);
    expect(shapes.list.properties.params.properties.sections.items.properties.rows.maxItems).toBe(10);
    expect(shapes.location.properties.params.properties.location.properties.degreesLatitude).toMatchObject({
      minimum: -90,
      maximum: 90,
    });
    expect(shapes.template.properties.params.properties.templateButtons.maxItems).toBe(3);
    expect(shapes.chat.properties.device.pattern).toBe('^[1-9][0-9]{6,14}$');
    // Group sends: no receiver; the device may be left out.
    const group = bodyOf('/groups/{id}/send').content['application/json'].schema.oneOf[0];
    expect(group.properties.receiver).toBeUndefined();
    expect(group.required).not.toContain('device');
  });

  it('shows the reply fields beside each type’s params, and a receiver that may be a group (docs/internals.md, Whatspie compatibility)', () => {
    const shapes = bodyOf('/messages').content['application/json'].schema.oneOf;
    for (const shape of shapes) {
      const params = shape.properties.params.properties;
      expect(params.quotedMessageId).toMatchObject({ type: 'string', maxLength: 128 });
      const type = shape.properties.type.enum[0] as string;
      // Audio, locations, stickers, contacts and polls have no text: `mentions` is refused
      // (test/messages/replies.test.ts), so it is not offered.
      if (['audio', 'location', 'sticker', 'contact', 'poll'].includes(type)) {
        expect(params.mentions).toBeUndefined();
        expect(shape.properties.params.description).toContain('`mentions` is not allowed');
      } else
        expect(params.mentions).toMatchObject({
          type: 'array',
          maxItems: 1024,
          items: { pattern: '^[1-9][0-9]{6,14}$' },
        });
    }
    expect(shapes[0].properties.receiver.examples).toContain('120363012345678901@g.us');
    const put = doc.paths['/groups/{id}'].put.requestBody.content['application/json'].schema;
    expect(Object.keys(put.properties)).toEqual(
      expect.arrayContaining(['subject', 'description', 'permissions', 'disappearing_messages']),
    );
    expect(put.properties.disappearing_messages.properties.duration.enum).toEqual(['24h', '7d', '90d']);
    const group = doc.paths['/groups/{id}'].get.responses['200'].content['application/json'].schema.properties.data;
    expect(Object.keys(group.properties)).toEqual(
      expect.arrayContaining(['jid', 'title', 'permissions', 'disappearing_messages']),
    );
  });

  it('describes bodies that validation accepts', () => {
    const URL_OK = 'https://example.com/a.png';
    const examples: Record<string, unknown> = {
      chat: { text: 'hi @6281234567891', mentions: ['6281234567891'] },
      image: { image: { url: URL_OK }, caption: 'c' },
      list: {
        title: 'Menu',
        text: 'Pick',
        buttonText: 'Open',
        sections: [{ title: 'S', rows: [{ title: 'R', rowId: 'r1' }] }],
      },
      file: { document: { url: URL_OK }, fileName: 'a.pdf' },
      video: { video: { url: URL_OK } },
      audio: { audio: { url: URL_OK } },
      location: { location: { degreesLatitude: 1, degreesLongitude: 2 } },
      template: { text: 't', templateButtons: [{ index: 1, quickReplyButton: { displayText: 'Yes', id: 'y' } }] },
      sticker: { sticker: { url: 'https://example.com/a.webp' } },
      contact: { contacts: [{ name: 'Ani', phone: '+6281234567891', organization: 'Toko' }] },
      poll: { name: 'Q', options: ['A', 'B'], selectable_count: 2 },
    };
    const shapes = bodyOf('/messages').content['application/json'].schema.oneOf;
    for (const shape of shapes) {
      const type = shape.properties.type.enum[0] as string;
      const params = examples[type] as Record<string, unknown>;
      // Every field the example uses is one the document shows.
      for (const key of Object.keys(params)) expect(Object.keys(shape.properties.params.properties)).toContain(key);
      expect(() =>
        validateSendRequest(
          { device: '6281234567890', receiver: '6289876543210', type, params },
          { requireReceiver: true },
        ),
      ).not.toThrow();
    }
  });

  it('answers the contract’s messages for a body the document refuses, not the framework’s', async () => {
    const res = await gw.request('POST', '/messages', { type: 'chat', device: '+62', params: { text: 5 } });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({
      code: 400,
      status: 400,
      message: 'Validation failed',
      errors: {
        device: [
          'must be a phone number in international format: digits only, country code first, no +, no leading 0, 7 to 15 digits',
        ],
        receiver: ['is required'],
        'params.text': ['must be a string'],
      },
    });
  });
});
