/**
 * A compliance profile that gates tools by their MCP annotations ("every destructive tool of every server needs
 * approval"): its gate is kept whole when the profiles' requirements are applied (two people from a risk). Pure.
 */
import { describe, expect, it } from 'vitest';
import { gatesOfCall } from '@/lib/permissions/gates';
import { combineProfiles, gatesWithProfiles } from './load';

const PROFILE = `
title: Four eyes on destruction
description: Destructive MCP tools wait for two people.
frameworks: [internal policy]
approvals:
  two_person_from_risk: high
  basis: segregation of duties
`;

const GATES = `
gates:
  - id: destructive-mcp
    annotations: { destructiveHint: true }
    risk: high
`;

describe('a profile gate by annotations', () => {
  it('keeps its annotations when the two-person requirement is applied, and covers destructive calls only', () => {
    const active = combineProfiles([{ name: 'four_eyes', folder: 'profiles/four_eyes', texts: { profile: PROFILE, gates: GATES } }], 'SWARM_PROFILE');
    const set = gatesWithProfiles([], active);
    const gate = set.gates.find((g) => g.id === 'destructive-mcp')!;
    expect(gate).toMatchObject({ tools: [], annotations: { destructiveHint: true }, approvers: { count: 2 } });
    expect(gate.origin).toMatch(/^profile four_eyes: .* \+ two people \(profile four_eyes\)$/);
    expect(gatesOfCall(set, 'github__delete_repo', {}).map((g) => g.id)).toEqual(['destructive-mcp']);
    expect(gatesOfCall(set, 'github__list_repos', { readOnlyHint: true })).toEqual([]);
    expect(gatesOfCall(set, 'github__delete_repo', undefined)).toEqual([]);
  });
});
