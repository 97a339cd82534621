import { Injectable } from '@nestjs/common';
import {
  DomainError,
  ErrorCodes,
  type CreateKbForCallerRequest,
  type KbBySlugRequest,
  type KbCaller,
  type KbIdentityDto,
  type KbRole,
  type KnowledgeBoxDto,
  type StandaloneKbListDto,
} from '@kb/contracts';
import type { KnowledgeBoxEntity } from '../entities/knowledge-box.entity';
import { accountForNewKb, userRoleOnKb } from './caller-kbs.rules';
import { KbsRepository } from './kbs.repository';
import { KbsService, knowledgeBoxDto, knowledgeBoxSummary } from './kbs.service';
import { UsersRepository } from './users.repository';

const notFound = () => new DomainError(ErrorCodes.KB_NOT_FOUND, 'Knowledge Box not found');

/**
 * The standalone KB routes, which name no account: what a caller can see across the accounts they are
 * in. A user sees the KBs of the accounts they own and the KBs they hold a role on; an API key sees
 * its one KB. Anything else is "not found", never "forbidden", so ids and slugs of other tenants'
 * KBs cannot be probed.
 */
@Injectable()
export class CallerKbsService {
  constructor(
    private readonly kbsService: KbsService,
    private readonly kbs: KbsRepository,
    private readonly users: UsersRepository,
  ) {}

  async create(req: CreateKbForCallerRequest): Promise<KbIdentityDto> {
    const { account_id: requested, ...body } = req.body;
    const memberships = await this.users.membershipsOf(req.user_id);
    const named = requested === undefined ? undefined : ((await this.users.findAccount(requested))?.id ?? null);
    const accountId = accountForNewKb(memberships, named);
    const kb = await this.kbsService.createEntity({ account_id: accountId, actor_user_id: req.user_id, body });
    return { uuid: kb.id, slug: kb.slug };
  }

  async list(caller: KbCaller): Promise<StandaloneKbListDto> {
    const visible = await this.visibleTo(caller);
    return { kbs: visible.map(({ kb, role }) => ({ ...knowledgeBoxSummary(kb, role), uuid: kb.id, account_id: kb.accountId })) };
  }

  async getBySlug(req: KbBySlugRequest): Promise<KnowledgeBoxDto> {
    const matches = await this.visibleTo(req, req.slug);
    if (matches.length === 0) throw notFound();
    // Slugs are unique per account only: a user in two accounts may see the same slug twice.
    if (matches.length > 1) {
      throw new DomainError(
        ErrorCodes.KB_SLUG_CONFLICT,
        `${matches.length} of your Knowledge Boxes (in different accounts) have the slug "${req.slug}": use GET /api/v1/account/{account_id}/kbs or the KB id`,
      );
    }
    const { kb, role } = matches[0] as { kb: KnowledgeBoxEntity; role: KbRole };
    return knowledgeBoxDto(kb, role);
  }

  private async visibleTo(caller: KbCaller, slug?: string): Promise<{ kb: KnowledgeBoxEntity; role: KbRole }[]> {
    if (caller.user_id) {
      const owned = new Set((await this.users.membershipsOf(caller.user_id)).filter((m) => m.role === 'AOWNER').map((m) => m.accountId));
      const kbRoles = await this.kbs.rolesOfUser(caller.user_id);
      const kbs = await this.kbs.listOfAccountsOrIds([...owned], [...kbRoles.keys()], slug);
      return kbs.flatMap((kb) => {
        const role = userRoleOnKb(kb, owned, kbRoles);
        return role ? [{ kb, role }] : [];
      });
    }
    if (caller.kb_id && caller.key_role) {
      const kb = await this.kbs.findById(caller.kb_id);
      return kb && (slug === undefined || kb.slug === slug) ? [{ kb, role: caller.key_role }] : [];
    }
    return [];
  }
}
