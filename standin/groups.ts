/**
 * Groups: made by a phone (control interface) or by a linked device (w:g2 create), their metadata, member
 * changes, and messages with sender keys in both directions.
 *
 * Owns: group state, the w:g2 IQs, the w:gp2 notifications to members' linked devices, fanning a linked device's
 * group message out to every other member device (its own key-distribution part plus the shared skmsg), and a
 * phone's group send (its sender key distributed to each device in a pkmsg/msg, then the skmsg).
 * Must never: let a non-member send to a group, or decrypt for a linked device.
 */
import { randomInt } from 'node:crypto';
import { getBinaryNodeChild, getBinaryNodeChildren, type BinaryNode, type proto } from 'baileys';
import { now } from './pairing.js';
import { phoneReceives, phoneSendsTo, type RoutingContext } from './routing.js';
import { lidDeviceJid, type Account, type Companion, type Group, type Target } from './world.js';

type Answer = BinaryNode[] | { error: number; text: string };

export class Groups {
  constructor(private readonly ctx: RoutingContext) {}

  private get world() {
    return this.ctx.world;
  }

  create(subject: string, creator: string, members: string[]): Group {
    const id = `120363${String(randomInt(10 ** 11, 10 ** 12))}@g.us`;
    const participants = [...new Set([creator, ...members])];
    for (const phone of participants) this.world.account(phone);
    const group: Group = { id, subject, creator, creation: Math.floor(Date.now() / 1000), participants };
    this.world.groups.set(id, group);
    this.notify(group, creator, [{ tag: 'create', attrs: {}, content: [this.metadata(group)] }]);
    return group;
  }

  metadata(group: Group): BinaryNode {
    const creator = this.world.account(group.creator);
    return {
      tag: 'group',
      attrs: {
        id: group.id.split('@')[0]!,
        subject: group.subject,
        s_t: String(group.creation),
        s_o: `${creator.lid}@lid`,
        creation: String(group.creation),
        creator: `${creator.lid}@lid`,
        creator_pn: `${creator.phone}@s.whatsapp.net`,
        addressing_mode: 'lid',
        size: String(group.participants.length),
      },
      content: group.participants.map((phone) => {
        const a = this.world.account(phone);
        return {
          tag: 'participant',
          attrs: {
            jid: `${a.lid}@lid`,
            phone_number: `${a.phone}@s.whatsapp.net`,
            ...(phone === group.creator ? { type: 'superadmin' } : {}),
          },
        };
      }),
    };
  }

  /** A w:gp2 notification to every linked device of every member (and of those just removed). */
  private notify(group: Group, actor: string, content: BinaryNode[], also: string[] = []): void {
    const by = this.world.account(actor);
    for (const phone of new Set([...group.participants, ...also])) {
      for (const target of this.world.devices(this.world.account(phone))) {
        if (target.kind !== 'companion') continue;
        this.world.deliver(target.companion, {
          tag: 'notification',
          attrs: {
            from: group.id,
            type: 'w:gp2',
            id: `standin-gp2-${randomInt(10 ** 9)}`,
            participant: `${by.lid}@lid`,
            participant_pn: `${by.phone}@s.whatsapp.net`,
            t: now(),
          },
          content,
        });
      }
    }
  }

  private phoneOf(jid: string): string | undefined {
    return this.world.accountOf(jid)?.phone;
  }

  changeMembers(group: Group, actor: string, action: 'add' | 'remove', phones: string[]): BinaryNode[] {
    const changed: BinaryNode[] = [];
    for (const phone of phones) {
      const a = this.world.account(phone);
      const index = group.participants.indexOf(phone);
      if (action === 'add' && index < 0) group.participants.push(phone);
      if (action === 'remove' && index >= 0) group.participants.splice(index, 1);
      changed.push({ tag: 'participant', attrs: { jid: `${a.lid}@lid`, phone_number: `${a.phone}@s.whatsapp.net` } });
    }
    this.notify(group, actor, [{ tag: action, attrs: {}, content: changed }], action === 'remove' ? phones : []);
    return changed;
  }

  /** The w:g2 IQs of a linked device. */
  async answer(companion: Companion, iq: BinaryNode, child: BinaryNode | undefined): Promise<Answer> {
    const me = companion.account.phone;
    const to = iq.attrs.to ?? '';
    switch (child?.tag) {
      case 'participating': {
        const mine = [...this.world.groups.values()].filter((g) => g.participants.includes(me));
        return [{ tag: 'groups', attrs: {}, content: mine.map((g) => this.metadata(g)) }];
      }
      case 'create': {
        const members = getBinaryNodeChildren(child, 'participant')
          .map((p) => this.phoneOf(p.attrs.jid ?? ''))
          .filter((p): p is string => p !== undefined);
        return [this.metadata(this.create(child.attrs.subject ?? '', me, members))];
      }
    }
    const group = this.world.groups.get(to);
    if (group === undefined) return { error: 404, text: 'item-not-found' };
    if (!group.participants.includes(me)) return { error: 403, text: 'forbidden' };
    switch (child?.tag) {
      case 'query':
        this.world.stats.group_queries++;
        return [this.metadata(group)];
      case 'add':
      case 'remove': {
        const phones = getBinaryNodeChildren(child, 'participant')
          .map((p) => this.phoneOf(p.attrs.jid ?? ''))
          .filter((p): p is string => p !== undefined);
        return [{ tag: child.tag, attrs: {}, content: this.changeMembers(group, me, child.tag, phones) }];
      }
      case 'subject':
        group.subject = Buffer.from((child.content as Uint8Array | undefined) ?? []).toString();
        this.notify(group, me, [
          { tag: 'subject', attrs: { subject: group.subject, s_o: `${companion.account.lid}@lid`, s_t: now() } },
        ]);
        return [];
      default:
        return { error: 501, text: 'feature-not-implemented' };
    }
  }

  /** A linked device's group message: each other member device gets its own part (if any) and the skmsg. */
  fanout = async (sender: Companion, node: BinaryNode): Promise<void> => {
    const { id = '', to = '' } = node.attrs;
    const group = this.world.groups.get(to);
    if (group === undefined || !group.participants.includes(sender.account.phone)) {
      this.ctx.log(`group message ${id} to ${to}: not a member`);
      return;
    }
    const skmsg = getBinaryNodeChildren(node, 'enc').find((e) => e.attrs.type === 'skmsg');
    const parts = new Map<string, BinaryNode>();
    for (const part of getBinaryNodeChildren(getBinaryNodeChild(node, 'participants'), 'to')) {
      const enc = getBinaryNodeChild(part, 'enc');
      const target = this.world.target(part.attrs.jid ?? '');
      if (enc !== undefined && target !== undefined) parts.set(key(target), enc);
    }
    for (const phone of group.participants) {
      for (const target of this.world.devices(this.world.account(phone))) {
        if (target.kind === 'companion' && target.companion === sender) continue;
        const encs = [parts.get(key(target)), skmsg].filter((e): e is BinaryNode => e !== undefined);
        if (encs.length === 0) continue;
        if (target.kind === 'phone') {
          void phoneReceives(
            this.ctx,
            target.account,
            sender,
            { id, chat: to, type: node.attrs.type ?? 'text', group: to },
            encs,
          ).catch((error) =>
            this.ctx.log(`phone ${phone} could not read group message ${id}: ${(error as Error).stack}`),
          );
          continue;
        }
        this.world.deliver(target.companion, {
          tag: 'message',
          attrs: {
            id,
            from: to,
            participant: lidDeviceJid(sender.account, sender.device),
            participant_pn: `${sender.account.phone}:${sender.device}@s.whatsapp.net`,
            addressing_mode: 'lid',
            type: node.attrs.type ?? 'text',
            t: now(),
          },
          content: encs,
        });
      }
    }
  };

  /** A phone sends to a group: its sender key to each member's linked devices, then the message under it. */
  async phoneSends(
    account: Account,
    group: Group,
    id: string,
    message: proto.IMessage,
    { lidOnly = false }: { lidOnly?: boolean } = {},
  ): Promise<void> {
    const { ciphertext, senderKeyDistributionMessage } = await account.primary.encryptGroup(group.id, message);
    const distribution: proto.IMessage = {
      senderKeyDistributionMessage: {
        groupId: group.id,
        axolotlSenderKeyDistributionMessage: senderKeyDistributionMessage,
      },
    };
    const skmsg: BinaryNode = { tag: 'enc', attrs: { v: '2', type: 'skmsg' }, content: ciphertext };
    for (const phone of group.participants) {
      for (const target of this.world.devices(this.world.account(phone))) {
        if (target.kind !== 'companion') continue;
        await phoneSendsTo(
          this.ctx,
          account,
          target,
          id,
          distribution,
          {
            from: group.id,
            participant: account.primary.lidJid,
            // From the phone's LID alone: the number is not named beside it.
            ...(lidOnly ? {} : { participant_pn: account.primary.pnJid }),
            addressing_mode: 'lid',
            type: message.conversation || message.extendedTextMessage ? 'text' : 'media',
          },
          [skmsg],
        );
      }
    }
  }
}

function key(target: Target): string {
  return target.kind === 'phone'
    ? `${target.account.phone}:0`
    : `${target.companion.account.phone}:${target.companion.device}`;
}
