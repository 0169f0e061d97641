"""What the sim workers write into the pocket-notes demo repository: tasks, steps, variants.

Pure data and pure functions (no I/O). The sim lead plans :data:`TASKS` (t1..t9); a worker
carries out a task as a list of :class:`Step` s, each one commit on the task's branch. Special
cases the script relies on:

- t2's behaviour depends on the user's answer to :attr:`SimTaskContent.question`: option 1
  builds variant ``counts``, option 2 variant ``alphabetical`` (see :func:`variant_for_answer`).
- t3's first step fails the repository's tests (a real bug: the tag is not normalized); its
  second step (``trigger="ci_fix"``) fixes it.
- t4's first version passes but is meant to get "Request changes"
  (:attr:`SimTaskContent.changes_requested`); its second step (``trigger="revision"``) answers
  the review. With Merge on the first version, the revision is never applied.
- t6 passes its tests but is the task the script rejects (:attr:`SimTaskContent.rejection_reason`);
  no task depends on it.
- t7 is blocked on the user (:attr:`SimTaskContent.blocked_on_user`) and has no steps.
- t8 is a stretch task that gets cancelled: its step exists (the worker starts on it) but it
  is never merged.

Every task writes only its own files (no path is written by two tasks), so the branches merge
without conflicts in any order that respects :attr:`SimTaskContent.deps`; :data:`MERGE_ORDER`
is the order the script merges them in.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Literal

from foreman.backends.sim import task_files_export as export
from foreman.backends.sim import task_files_misc as misc
from foreman.backends.sim import task_files_tag_model as tag_model
from foreman.backends.sim import task_files_tags as tags
from foreman.errors import NotFound

StepTrigger = Literal["work", "ci_fix", "revision"]


@dataclass(frozen=True)
class Step:
    """One commit a worker makes on its task branch.

    Attributes:
        message: the commit message.
        writes: repository-relative POSIX path -> the file's full new content (UTF-8).
        deletes: repository-relative POSIX paths the step removes.
        expect_tests_pass: whether the repository's tests pass right after this step (on the
            task's base with its dependencies merged).
        trigger: why the step happens: ``work`` (the task itself), ``ci_fix`` (after the
            previous step failed CI), ``revision`` (after a merge decision said Request changes).
    """

    message: str
    writes: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    deletes: tuple[str, ...] = ()
    expect_tests_pass: bool = True
    trigger: StepTrigger = "work"


@dataclass(frozen=True)
class ProductQuestion:
    """A question the worker asks the user before building; each option picks a variant.

    Attributes:
        prompt: the question as the user reads it.
        options: the option labels, in the order shown (option 1 first).
        variants: the variant each option builds, parallel to ``options``.
    """

    prompt: str
    options: tuple[str, ...]
    variants: tuple[str, ...]


@dataclass(frozen=True)
class SimTaskContent:
    """A task of the sim plan and the content its worker writes.

    Attributes:
        id: ``t1`` .. ``t9``.
        title: a short imperative title.
        description: what the lead asks for, one or two sentences.
        deps: ids of the tasks that must be merged before this one starts.
        variants: variant name -> the steps, in order. Most tasks have one variant,
            ``default``; t7 has none with steps (its only variant is empty).
        default_variant: the variant used when none is chosen (option 1's, for t2).
        question: the product question that picks the variant, if any.
        changes_requested: the review comment that a Request changes answer carries (the
            ``revision`` steps answer it); None when the task has no revision.
        rejection_reason: why the reviewer rejects this task, for the task the script rejects.
        blocked_on_user: what only the user can do, for a task that blocks on the user.
        stretch: a nice-to-have the lead cancels.
    """

    id: str
    title: str
    description: str
    deps: tuple[str, ...]
    variants: Mapping[str, tuple[Step, ...]]
    default_variant: str = "default"
    question: ProductQuestion | None = None
    changes_requested: str | None = None
    rejection_reason: str | None = None
    blocked_on_user: str | None = None
    stretch: bool = False

    @property
    def steps(self) -> tuple[Step, ...]:
        """The steps of the default variant, revisions included."""
        return self.variants[self.default_variant]


def _w(*pairs: tuple[str, str]) -> Mapping[str, str]:
    return MappingProxyType(dict(pairs))


_T2_QUESTION = ProductQuestion(
    prompt="What should `notes tags` show: every tag with how many notes use it (most used "
           "first), or just the tags in alphabetical order?",
    options=("List tags with counts", "List tags alphabetically"),
    variants=("counts", "alphabetical"),
)

_TASK_LIST = (
    SimTaskContent(
        id="t1",
        title="Add tags to notes",
        description="Notes get tags (model and JSON store, old files still load); "
                    "`notes add --tag`, `notes tag ID TAGS...`, tags shown by list and show.",
        deps=(),
        variants=MappingProxyType({"default": (
            Step("Add tags to notes (model, store, add --tag, tag command)", _w(
                ("pocket_notes/notes.py", tag_model.T1_NOTES),
                ("pocket_notes/store.py", tag_model.T1_STORE),
                ("pocket_notes/commands/notes.py", tag_model.T1_COMMANDS_NOTES),
                ("tests/test_tags.py", tag_model.T1_TEST_TAGS),
            )),
        )}),
    ),
    SimTaskContent(
        id="t2",
        title="Add the `notes tags` command",
        description="A command that shows the tags in use; ask the user what it should show.",
        deps=("t1",),
        variants=MappingProxyType({
            "counts": (
                Step("Add `notes tags`: tags with their note counts, most used first", _w(
                    ("pocket_notes/commands/tags.py", tags.T2_COMMANDS_TAGS_COUNTS),
                    ("tests/test_tags_command.py", tags.T2_TEST_TAGS_COMMAND_COUNTS),
                )),
            ),
            "alphabetical": (
                Step("Add `notes tags`: the tags in use, alphabetically", _w(
                    ("pocket_notes/commands/tags.py", tags.T2_COMMANDS_TAGS_ALPHA),
                    ("tests/test_tags_command.py", tags.T2_TEST_TAGS_COMMAND_ALPHA),
                )),
            ),
        }),
        default_variant="counts",
        question=_T2_QUESTION,
    ),
    SimTaskContent(
        id="t3",
        title="Search notes by tag",
        description="`notes search --tag NAME`, alone or combined with words.",
        deps=("t1",),
        variants=MappingProxyType({"default": (
            Step("Search notes by tag (notes search --tag)", _w(
                ("pocket_notes/search.py", tags.T3_SEARCH_BUGGY),
                ("pocket_notes/commands/search.py", tags.T3_COMMANDS_SEARCH),
                ("tests/test_search.py", tags.T3_TEST_SEARCH),
            ), expect_tests_pass=False),
            Step("Fix tag search: compare the normalized tag (#Work finds work)", _w(
                ("pocket_notes/search.py", tags.T3_SEARCH),
            ), trigger="ci_fix"),
        )}),
    ),
    SimTaskContent(
        id="t4",
        title="Export notes to Markdown",
        description="`notes export` writes every note as one Markdown document.",
        deps=("t1",),
        variants=MappingProxyType({"default": (
            Step("Add `notes export`: every note as one Markdown document", _w(
                ("pocket_notes/export.py", export.T4_EXPORT),
                ("pocket_notes/commands/export.py", export.T4_COMMANDS_EXPORT),
                ("tests/test_export.py", export.T4_TEST_EXPORT),
            )),
            Step("Export: escape Markdown in titles, add --output FILE", _w(
                ("pocket_notes/export.py", export.T4_EXPORT_V2),
                ("pocket_notes/commands/export.py", export.T4_COMMANDS_EXPORT_V2),
                ("tests/test_export.py", export.T4_TEST_EXPORT_V2),
            ), trigger="revision"),
        )}),
        changes_requested=export.T4_CHANGES_REQUESTED,
    ),
    SimTaskContent(
        id="t5",
        title="Fix note ages older than a day",
        description="`notes show` says \"2 hours ago\" for a note from three days ago: "
                    "format_age uses timedelta.seconds, which drops whole days.",
        deps=(),
        variants=MappingProxyType({"default": (
            Step("Fix format_age for notes older than a day (use total_seconds)", _w(
                ("pocket_notes/formatting.py", misc.T5_FORMATTING),
                ("tests/test_formatting.py", misc.T5_TEST_FORMATTING),
            )),
        )}),
    ),
    SimTaskContent(
        id="t6",
        title="More tests for the note store",
        description="Cover the store's edge cases: missing file, file layout, temporary "
                    "files, unicode, unknown ids.",
        deps=("t1",),
        variants=MappingProxyType({"default": (
            Step("Add edge-case tests for NoteStore", _w(
                ("tests/test_store_edge_cases.py", misc.T6_TEST_STORE_MORE),
            )),
        )}),
        rejection_reason=misc.T6_REJECTION_REASON,
    ),
    SimTaskContent(
        id="t7",
        title="Publish pocket-notes to PyPI",
        description="Upload the release to PyPI once the docs are in.",
        deps=(),
        variants=MappingProxyType({"default": ()}),
        blocked_on_user="Publishing needs a PyPI API token for the pocket-notes project, "
                        "which only the user has.",
    ),
    SimTaskContent(
        id="t8",
        title="Stretch: import notes from Markdown files",
        description="`notes import FOLDER` adds one note per Markdown file.",
        deps=("t1",),
        variants=MappingProxyType({"default": (
            Step("Add `notes import FOLDER` (one note per Markdown file)", _w(
                ("pocket_notes/importer.py", misc.T8_IMPORTER),
                ("pocket_notes/commands/import_md.py", misc.T8_COMMANDS_IMPORT),
                ("tests/test_import.py", misc.T8_TEST_IMPORT),
            )),
        )}),
        stretch=True,
    ),
    SimTaskContent(
        id="t9",
        title="Update the README and changelog for 0.4.0",
        description="Document tags, tag search and export; bump the version to 0.4.0.",
        deps=("t2", "t3", "t4", "t5"),
        variants=MappingProxyType({"default": (
            Step("Docs for 0.4.0: README, changelog, version bump", _w(
                ("README.md", misc.T9_README),
                ("CHANGELOG.md", misc.T9_CHANGELOG),
                ("pyproject.toml", misc.T9_PYPROJECT),
                ("pocket_notes/__init__.py", misc.T9_INIT),
                ("tests/test_version.py", misc.T9_TEST_VERSION),
            )),
        )}),
    ),
)

TASKS: Mapping[str, SimTaskContent] = MappingProxyType({task.id: task for task in _TASK_LIST})
"""Every task of the sim plan by id, in plan order (t1..t9)."""

MERGE_ORDER: tuple[str, ...] = ("t1", "t5", "t3", "t2", "t4", "t6", "t9")
"""The order the script merges tasks in (t7 never merges, t8 is cancelled)."""


def task(task_id: str) -> SimTaskContent:
    """The task with this id.

    Raises:
        NotFound: no such task.
    """
    try:
        return TASKS[task_id]
    except KeyError:
        raise NotFound(f"the sim plan has no task {task_id!r} (it has {', '.join(TASKS)})") from None


def steps_for(task_id: str, variant: str | None = None, *,
              include_revisions: bool = True) -> list[Step]:
    """The steps a worker makes for a task, in order.

    Args:
        task_id: ``t1`` .. ``t9``.
        variant: the variant to build; None for the task's default (option 1's variant).
        include_revisions: False leaves out the ``revision`` steps (the path where the
            first version is merged without Request changes).

    Returns:
        A new list (empty for a task with nothing to write, t7).

    Raises:
        NotFound: no such task, or the task has no such variant.
    """
    content = task(task_id)
    name = content.default_variant if variant is None else variant
    try:
        steps = content.variants[name]
    except KeyError:
        raise NotFound(f"task {task_id} has no variant {name!r} "
                       f"(it has {', '.join(content.variants)})") from None
    return [step for step in steps if include_revisions or step.trigger != "revision"]


def work_steps(task_id: str, variant: str | None, *, came_back: bool) -> list[Step]:
    """The steps a worker's work turn on the task makes: its ``work`` steps, and, when the task
    came back to the board after a review (a failed CI or a red merge test while its worker was
    on another task, or a restart that cut the follow-up), its ``ci_fix`` steps too: the flow then
    starts a work turn on it, told why in its prompt, not a follow-up, and without the fix the task
    went round CI, merge decision and red merge test until it was blocked. Raises NotFound as
    :func:`steps_for`."""
    steps = steps_for(task_id, variant, include_revisions=False)
    return [s for s in steps if s.trigger == "work" or (came_back and s.trigger == "ci_fix")]


def variant_for_answer(task_id: str, option: int) -> str:
    """The variant a 1-based answer to the task's product question builds.

    Raises:
        NotFound: no such task, the task asks no question, or there is no such option.
    """
    question = task(task_id).question
    if question is None:
        raise NotFound(f"task {task_id} asks no product question")
    if not 1 <= option <= len(question.variants):
        raise NotFound(f"task {task_id}'s question has options 1 to {len(question.variants)}, "
                       f"not {option}")
    return question.variants[option - 1]


def files_written(task_id: str) -> frozenset[str]:
    """Every path any step of any variant of the task writes or deletes."""
    content = task(task_id)
    return frozenset(path for steps in content.variants.values() for step in steps
                     for path in (*step.writes, *step.deletes))
