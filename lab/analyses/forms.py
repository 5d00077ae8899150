"""Forms that bring a template in: paste, upload, Hub."""

from __future__ import annotations

import json
from typing import Any, TypeVar, cast

from django import forms
from django.conf import settings

from lab import untrusted_json
from lab.analyses.parsing import TOOL_CHOICES, ParserOptions


def _size_message(size: int) -> str:
    limit = settings.LAB_MAX_TEMPLATE_BYTES
    return (
        f"The template is {size:,} bytes; the lab accepts at most {limit:,} bytes "
        f"({limit / 1_000_000:g} MB)."
    )


FormT = TypeVar("FormT", bound=forms.Form)


def refused(form: FormT, field: str | None, message: str) -> FormT:
    """Show only this error on a bound form whose request could not be read as the form."""
    form.full_clean()
    form.errors.clear()  # not "required": the data was sent, it was unusable as a whole
    form.add_error(field, message)
    return form


def _sent_too_much_message(sent: int) -> str:
    limit = settings.LAB_MAX_TEMPLATE_BYTES
    return (
        f"The pasted template is too large (the form sent {sent:,} bytes); the lab accepts "
        f"at most {limit:,} bytes ({limit / 1_000_000:g} MB)."
    )


class PasteForm(forms.Form):
    """A template's text (pasted, or a stored one edited) and the title it goes by."""

    title = forms.CharField(
        label="Title",
        max_length=200,
        required=False,
        help_text="optional; else derived (file, Hub repo or the family the markers suggest)",
    )
    source = forms.CharField(
        label="Template",
        strip=False,  # trailing newlines are part of a template
        widget=forms.Textarea(attrs={"rows": 12, "spellcheck": "false", "autocomplete": "off"}),
    )

    @classmethod
    def too_large(cls, sent: int) -> PasteForm:
        """Build the form for a request too large to read, with the size message on its field."""
        return refused(cls(data={}), "source", _sent_too_much_message(sent))

    def clean_source(self) -> str:
        text: str = self.cleaned_data["source"]
        size = len(text.encode("utf-8"))
        if size > settings.LAB_MAX_TEMPLATE_BYTES:
            raise forms.ValidationError(_size_message(size))
        return text


class UploadForm(forms.Form):
    file = forms.FileField(
        label="File",
        help_text=".jinja, tokenizer_config.json or chat_template.json",
        widget=forms.ClearableFileInput(attrs={"accept": ".jinja,.json,.j2,.txt"}),
    )

    def clean_file(self) -> Any:
        upload = self.cleaned_data["file"]
        if upload.size > settings.LAB_MAX_TEMPLATE_BYTES:
            raise forms.ValidationError(_size_message(upload.size))
        return upload


class UploadPickForm(forms.Form):
    """Pick which named templates of an uploaded file to analyse."""

    file_sha256 = forms.CharField(widget=forms.HiddenInput(), max_length=64)
    names = forms.MultipleChoiceField(
        label="Named templates",
        widget=forms.CheckboxSelectMultiple(),
        error_messages={"required": "Pick at least one template to analyse."},
    )

    def __init__(
        self, *args: Any, names: tuple[str, ...] = (), filename: str = "", **kwargs: Any
    ) -> None:
        super().__init__(*args, **kwargs)
        self.filename = filename
        picker = cast(forms.MultipleChoiceField, self.fields["names"])
        picker.choices = [(name, name) for name in names]


class HubForm(forms.Form):
    repo_id = forms.CharField(
        label="Repo id",
        max_length=200,
        widget=forms.TextInput(attrs={"placeholder": "Qwen/Qwen3-8B"}),
    )
    revision = forms.CharField(
        label="Revision",
        max_length=200,
        required=False,
        widget=forms.TextInput(attrs={"placeholder": "main"}),
    )
    named_template = forms.CharField(
        label="Named template", max_length=200, required=False, widget=forms.HiddenInput()
    )

    def __init__(self, *args: Any, names: tuple[str, ...] = (), **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # The picker appears once a fetch has shown that the repo has several named templates.
        if names:
            self.fields["named_template"].widget = forms.Select(choices=[(n, n) for n in names])

    def clean_repo_id(self) -> str:
        return str(self.cleaned_data["repo_id"]).strip()

    def clean_revision(self) -> str:
        return str(self.cleaned_data["revision"]).strip()


def _pretty(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False)


THINKING_CHOICES = [("", "unset"), ("true", "true"), ("false", "false")]


class ParserOptionsForm(forms.Form):
    tools = forms.CharField(
        label="Tools (OpenAI JSON)",
        required=False,
        strip=False,
        widget=forms.Textarea(attrs={"rows": 8, "spellcheck": "false"}),
    )
    enable_thinking = forms.ChoiceField(
        label="enable_thinking", choices=THINKING_CHOICES, required=False
    )
    parallel_tool_calls = forms.BooleanField(label="Parallel tool calls", required=False)
    reasoning_format = forms.ChoiceField(
        label="Reasoning format", choices=[("auto", "auto (extract)"), ("none", "none (keep)")]
    )
    tool_choice = forms.ChoiceField(
        label="tool_choice", choices=[(c, c) for c in TOOL_CHOICES], required=False
    )
    json_schema = forms.CharField(
        label="Response format (JSON schema)",
        required=False,
        strip=False,
        help_text="Empty: free text. A schema: the answer must be JSON matching it.",
        widget=forms.Textarea(attrs={"rows": 4, "spellcheck": "false"}),
    )

    @classmethod
    def from_options(cls, options: ParserOptions) -> ParserOptionsForm:
        """Build an unbound form showing these options."""
        thinking = {None: "", True: "true", False: "false"}[options.enable_thinking]
        return cls(
            initial={
                "tools": _pretty(options.tools),
                "enable_thinking": thinking,
                "parallel_tool_calls": options.parallel_tool_calls,
                "reasoning_format": options.reasoning_format,
                "tool_choice": options.tool_choice,
                "json_schema": _pretty(options.json_schema) if options.json_schema else "",
            }
        )

    def clean_tools(self) -> list[Any]:
        text = str(self.cleaned_data["tools"]).strip()
        if not text:
            return []
        try:
            tools = untrusted_json.loads(text)
        except ValueError as exc:
            raise forms.ValidationError(
                f"Tools must be a JSON array of tool definitions: {exc}"
            ) from exc
        if not isinstance(tools, list) or not all(isinstance(t, dict) for t in tools):
            raise forms.ValidationError(
                "Tools must be a JSON array of objects, like "
                '[{"type": "function", "function": {...}}].'
            )
        return tools

    def clean_json_schema(self) -> dict[str, Any] | None:
        text = str(self.cleaned_data["json_schema"]).strip()
        if not text:
            return None
        try:
            schema = json.loads(text)
        except ValueError as exc:
            raise forms.ValidationError(f"The schema must be a JSON object: {exc}") from exc
        if not isinstance(schema, dict):
            raise forms.ValidationError(
                'The schema must be a JSON object, like {"type": "object", "properties": {...}}.'
            )
        return schema

    def options(self) -> ParserOptions:
        """Return the validated options (call after is_valid())."""
        data = self.cleaned_data
        thinking = {"": None, "true": True, "false": False}[data.get("enable_thinking") or ""]
        return ParserOptions(
            tools=data["tools"],
            enable_thinking=thinking,
            parallel_tool_calls=bool(data["parallel_tool_calls"]),
            reasoning_format=data["reasoning_format"],
            tool_choice=data["tool_choice"] or "auto",
            json_schema=data["json_schema"],
        )


def _json_field(label: str, rows: int, help_text: str, required: bool = False) -> forms.CharField:
    return forms.CharField(
        label=label,
        required=required,
        strip=False,
        help_text=help_text,
        widget=forms.Textarea(attrs={"rows": rows, "spellcheck": "false"}),
    )


def _read_json(text: str, expected: type, what: str) -> Any:
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise forms.ValidationError(f"{what} must be JSON: {exc}") from exc
    if not isinstance(value, expected):
        raise forms.ValidationError(f"{what} must be a JSON {expected.__name__}; found "
                                    f"{type(value).__name__}.")
    return value


class RenderSideForm(forms.Form):
    """One side of the render playground: a conversation and apply_chat_template's arguments.

    Sent by GET (prefixes "a" and "b"), so the page's URL is the permalink of its inputs.
    """

    messages = _json_field("Messages", 12, "a JSON list of messages (tool_calls, "
                           "tool responses and reasoning_content included)", required=True)
    tools = _json_field("Tools", 5, "a JSON list of tool definitions; empty: none")
    kwargs = _json_field("Template kwargs", 2, 'a JSON object, e.g. {"enable_thinking": false}')
    add_generation_prompt = forms.BooleanField(label="add_generation_prompt", required=False)
    continue_final_message = forms.BooleanField(label="continue_final_message", required=False)
    bos_token = forms.CharField(label="bos_token", required=False, max_length=500,
                                help_text="empty: the template's own")
    eos_token = forms.CharField(label="eos_token", required=False, max_length=500,
                                help_text="empty: the template's own")

    def clean_messages(self) -> list[Any]:
        return list(_read_json(self.cleaned_data["messages"], list, "Messages"))

    def clean_tools(self) -> list[Any] | None:
        text = str(self.cleaned_data["tools"]).strip()
        return list(_read_json(text, list, "Tools")) if text else None

    def clean_kwargs(self) -> dict[str, Any]:
        text = str(self.cleaned_data["kwargs"]).strip()
        return dict(_read_json(text, dict, "Template kwargs")) if text else {}


class CompareForm(forms.Form):
    """Two stored templates (key or source sha256), or two revisions of one Hub repo."""

    a = forms.CharField(label="Template A", required=False, max_length=64,
                        help_text="a stored template's id (as in /t/<id>/)")
    b = forms.CharField(label="Template B", required=False, max_length=64)
    repo_id = forms.CharField(label="or Hub repo", required=False, max_length=200,
                              widget=forms.TextInput(attrs={"placeholder": "org/model"}))
    rev_a = forms.CharField(label="revision A", required=False, max_length=200,
                            help_text="branch, tag or commit sha; leave both empty to list "
                                      "the commits that changed the template")
    rev_b = forms.CharField(label="revision B", required=False, max_length=200)

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if not (data.get("a") and data.get("b")) and not data.get("repo_id"):
            raise forms.ValidationError(
                "Give two stored templates (A and B), or a Hub repo (with two revisions, or "
                "none to list the commits that changed its template)."
            )
        return data
