"""Skill routes (docs/daemon-additions.md: GET /v1/skills, PUT /v1/skills/{name})."""

from __future__ import annotations

from typing import TYPE_CHECKING

from fastapi import APIRouter

from openwork_core.daemon.schemas import SkillListBody, SkillStatusBody
from openwork_core.daemon.validation import StorableStr
from openwork_core.daemon.views import skill_list

if TYPE_CHECKING:
    from openwork_core.service import OpenWorkCore


def skills_routes(router: APIRouter, core: OpenWorkCore) -> None:

    @router.get("/v1/skills", response_model=SkillListBody)
    async def list_skills() -> SkillListBody:
        return skill_list(await core.skill_listing())

    @router.put("/v1/skills/{name}", response_model=SkillListBody)
    async def set_skill(name: StorableStr, body: SkillStatusBody) -> SkillListBody:
        return skill_list(await core.set_skill_disabled(name, body.disabled))
