"""The credential shapes the redactor hides: a table of `Shape`s, derived from detect-secrets' rules.

Each `Shape` is one kind of credential: a regular expression that finds it, and where it came from.
Most are detect-secrets' plugins (`source="detect-secrets <Plugin>"`), rewritten in two ways only:

- every pattern starts with a literal character, and a rare one where it can (`k-(?<=sk-)`: `k` is
  far rarer than `s`), so the one alternation `Redactor` compiles keeps the regex engine's fast skip
  over text that holds no secret (see redact.py). The look-behind checks what came before, and
  `behind` (so many characters) or `left` (a character class, for a rule that starts with one: the
  secret runs over it before the match) says where the secret really begins;
- a shape covers the whole token where detect-secrets matches a fixed-length prefix of it (Stripe's
  keys are 24 characters there and 99 or more today): half a key hidden is a key leaked.

The others fill gaps detect-secrets leaves (`source="ours: ..."`, naming gitleaks' rule where it has
one): Anthropic keys, Sentry DSNs, Google API keys, `Bearer` and `x-api-key` header values.

`secret`, a named group, is the part replaced when a shape keeps context around it (the header name,
`postgres://user:` and `@host` around a password), so the model still knows what was there.

detect-secrets is not imported at run time (its import costs about 90 ms of start-up): the table is
checked against the installed detect-secrets by tests/test_secret_shapes.py, which fails when its
rules change or a shape stops covering what a rule matches. Its plugins left out, and why, are
listed there (entropy and keyword heuristics that would hide hashes, ids and ordinary code).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["SHAPES", "Shape"]


@dataclass(frozen=True)
class Shape:
    name: str
    pattern: str  # starts with a literal character; `(?P<secret>...)` marks the part replaced, if any
    source: str
    left: str = ""  # a character class the secret extends over before the match (a look-behind vouches)
    behind: int = 0  # or: the secret begins this many characters before the match (a look-behind saw them)


# Characters a URL's password cannot hold unescaped (RFC 3986 gen-delims but ":" and "@"), a quote and
# braces: `"` ends a URL in JSON and code (without it, a port followed by an e-mail address on a
# minified JSON line would read as `user:password@`), and `${DB_PASSWORD}` is a template, not a secret.
# detect-secrets refuses sub-delims too (`!$&'()*+,;=`), which real DATABASE_URL passwords hold; we
# take them. The password runs to the last "@" (`p@ss` unescaped is seen whole).
_PASSWORD = r"[^\s/?#\[\]{}\"]+"
_USER = r"[^\s:/?#@\[\]{}\"]*"  # may be empty: redis://:password@host
_TOKEN = r"[A-Za-z0-9_\-]"

SHAPES: tuple[Shape, ...] = (
    # -- ours ---------------------------------------------------------------------------------------
    Shape(
        "anthropic or openai key",  # gitleaks: anthropic-api-key, openai-api-key
        # The look-ahead demands a digit, so hyphenated words ("sk-learn-style-names") are not keys.
        r"k-(?<=sk-)(?=[A-Za-z0-9_\-]{0,200}\d)[A-Za-z0-9_\-]{20,}",
        "ours: sk-ant-..., sk-proj-..., sk-svcacct-... (detect-secrets' OpenAIDetector needs T3BlbkFJ)",
        behind=1,
    ),
    Shape(
        "github fine-grained token",
        r"github_pat_[A-Za-z0-9_]{22,}",
        "ours: gitleaks github-fine-grained-pat",
    ),
    Shape("google api key", r"AIza[0-9A-Za-z_\-]{35}", "ours: gitleaks gcp-api-key"),
    Shape("npm access token", r"pm_(?<=npm_)[A-Za-z0-9]{36,}", "ours: gitleaks npm-access-token", behind=1),
    # Live keys of 24 characters in detect-secrets; gitleaks' stripe-access-token adds test and prod,
    # and today's keys are longer.
    Shape(
        "stripe key",
        r"k_(?<=[rs]k_)(?:live|test|prod)_[0-9a-zA-Z]{24,}",
        "detect-secrets StripeDetector",
        behind=1,
    ),
    # One alternative per first letter's case, so that each starts with a literal.
    Shape("bearer header", r"B(?i:earer[ \t]+)(?P<secret>[A-Za-z0-9._~+/\-]{16,}=*)", "ours"),
    Shape("bearer header", r"b(?i:earer[ \t]+)(?P<secret>[A-Za-z0-9._~+/\-]{16,}=*)", "ours"),
    Shape(
        "x-api-key header",
        r"X(?i:-api-key[\"']?[ \t]*[:=][ \t]*[\"']?)(?P<secret>[A-Za-z0-9._~+/\-]{16,}=*)",
        "ours",
    ),
    Shape(
        "x-api-key header",
        r"x(?i:-api-key[\"']?[ \t]*[:=][ \t]*[\"']?)(?P<secret>[A-Za-z0-9._~+/\-]{16,}=*)",
        "ours",
    ),
    # Before the password in a URL: a DSN's public key (32 hex digits) is a credential too, and the
    # old form's "public:secret" both go.
    Shape(
        "sentry dsn",
        r"://(?P<secret>[0-9a-f]{32}(?::[0-9a-f]{32})?)@",
        "ours: https://<key>[:<secret>]@o1.ingest.sentry.io/1 (detect-secrets has no Sentry rule)",
    ),
    # -- detect-secrets -----------------------------------------------------------------------------
    Shape(
        "aws access key id",
        r"A(?:3T[A-Z0-9]|BIA|CCA|KIA|SIA|GPA|IDA|ROA|NPA|NVA|IPA)[0-9A-Z]{16,}",
        "detect-secrets AWSKeyDetector (and the other IAM id prefixes)",
    ),
    # AWS secret keys next to a name saying so; unquoted too (a .env file), where detect-secrets wants quotes.
    Shape(
        "aws secret access key",
        r"w(?<=[aA]w)(?i:s.{0,20}?(?:key|pwd|pw|password|pass|token).{0,20}?['\"]?)"
        r"(?P<secret>[0-9a-zA-Z/+]{40})(?![0-9a-zA-Z/+])",
        "detect-secrets AWSKeyDetector",
    ),
    Shape(
        "aws secret access key",
        r"W(?<=[aA]W)(?i:s.{0,20}?(?:key|pwd|pw|password|pass|token).{0,20}?['\"]?)"
        r"(?P<secret>[0-9a-zA-Z/+]{40})(?![0-9a-zA-Z/+])",
        "detect-secrets AWSKeyDetector",
    ),
    Shape("artifactory token", r"AKC[a-zA-Z0-9]{10,}", "detect-secrets ArtifactoryDetector"),
    # Only between the separators detect-secrets demands: "AP" and hex starts many capitalised words.
    Shape(
        "artifactory password",
        r"AP[0-9A-F][a-zA-Z0-9]{8,}(?=[\s\"]|\Z)",
        "detect-secrets ArtifactoryDetector",
    ),
    Shape(
        "azure storage key",
        r"AccountKey=(?P<secret>[a-zA-Z0-9+/=]{88,})",
        "detect-secrets AzureStorageKeyDetector",
    ),
    Shape(
        "password in a url",
        r"://" + _USER + r":(?P<secret>" + _PASSWORD + r")@",
        "detect-secrets BasicAuthDetector (also covers CloudantDetector's URLs)",
    ),
    Shape(
        "discord bot token",
        r"M[a-zA-Z0-9_\-]{23,25}\.[a-zA-Z0-9_\-]{6}\.[a-zA-Z0-9_\-]{27,}",
        "detect-secrets DiscordBotTokenDetector",
    ),
    Shape(
        "discord bot token",
        r"N[a-zA-Z0-9_\-]{23,25}\.[a-zA-Z0-9_\-]{6}\.[a-zA-Z0-9_\-]{27,}",
        "detect-secrets DiscordBotTokenDetector",
    ),
    Shape(
        "discord bot token",
        r"O[a-zA-Z0-9_\-]{23,25}\.[a-zA-Z0-9_\-]{6}\.[a-zA-Z0-9_\-]{27,}",
        "detect-secrets DiscordBotTokenDetector",
    ),
    Shape("github token", r"gh[pousr]_[A-Za-z0-9_]{30,}", "detect-secrets GitHubTokenDetector"),
    Shape(
        "gitlab token",
        r"gl(?:pat|dt|ft|soat|rt|cbt|imt|ptt|agent|oas)-" + _TOKEN + r"{20,}(?:\." + _TOKEN + r"+)*",
        "detect-secrets GitLabTokenDetector (and today's routable tokens, which hold dots)",
    ),
    Shape("gitlab runner token", r"GR1348941" + _TOKEN + r"{20,}", "detect-secrets GitLabTokenDetector"),
    # detect-secrets stops before the signature (a lazy `*?`); the whole token goes here.
    Shape(
        "json web token",
        r"J(?<=eyJ)[A-Za-z0-9_=\-]+\.[A-Za-z0-9_=\-]+(?:\.[A-Za-z0-9_.+/=\-]*)?",
        "detect-secrets JwtTokenDetector",
        behind=2,
    ),
    Shape(
        "mailchimp key",
        r"-us(?<=[0-9a-z]{32}-us)[0-9]{1,2}",
        "detect-secrets MailchimpDetector",
        left="[0-9a-z]",
    ),
    Shape("npm auth token", r"T(?<=:_authT)oken=\s*(?P<secret>.+)", "detect-secrets NpmDetector"),
    Shape(
        "openai key",
        r"k-(?<=sk-)[A-Za-z0-9_\-]*[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20,}",
        "detect-secrets OpenAIDetector",
        behind=1,
    ),
    # PEM private keys, including a block cut off before its END line (a truncated output).
    Shape(
        "private key",
        r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?"
        r"(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|\Z)",
        "detect-secrets PrivateKeyDetector",
    ),
    Shape(
        "private key",
        r"---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----[\s\S]*?(?:---- END SSH2 ENCRYPTED PRIVATE KEY ----|\Z)",
        "detect-secrets PrivateKeyDetector",
    ),
    Shape(
        "private key",
        r"PuTTY-User-Key-File-[0-9](?::[\s\S]*?(?:Private-MAC: [0-9a-f]+|\Z))?",
        "detect-secrets PrivateKeyDetector",
    ),
    # The marker alone (prose, a truncated header): what detect-secrets itself flags.
    Shape(
        "private key",
        r"BEGIN (?:DSA |EC |OPENSSH |PGP |RSA |SSH2 ENCRYPTED )?PRIVATE KEY(?: BLOCK)?",
        "detect-secrets PrivateKeyDetector",
    ),
    Shape(
        "pypi token",
        r"AgE(?<=pypi-AgE)(?:IcHlwaS5vcmc|NdGVzdC5weXBpLm9yZw)[A-Za-z0-9_\-]{70,}",
        "detect-secrets PypiTokenDetector",
        behind=5,
    ),
    Shape("sendgrid key", r"SG\.[a-zA-Z0-9_\-]{22}\.[a-zA-Z0-9_\-]{43,}", "detect-secrets SendGridDetector"),
    Shape(
        "slack token",
        r"x(?i:ox[abposre]-(?:[0-9]+-)+[a-z0-9]+)[A-Za-z0-9\-]*",
        "detect-secrets SlackDetector",
    ),
    Shape(
        "slack token",
        r"X(?i:ox[abposre]-(?:[0-9]+-)+[a-z0-9]+)[A-Za-z0-9\-]*",
        "detect-secrets SlackDetector",
    ),
    Shape("slack token", r"xox[abposre]-[A-Za-z0-9\-]{10,}", "ours: Slack's refresh and config tokens"),
    # The URL's path is the secret: the match may start anywhere before it (at a rare letter).
    Shape(
        "slack webhook",
        r"k(?i:s\.slack\.com/(?:services|workflows|triggers)/)(?P<secret>[A-Za-z0-9_/+]+)",
        "detect-secrets SlackDetector (gitleaks' slack-webhook-url adds workflows and triggers)",
    ),
    Shape(
        "slack webhook",
        r"K(?i:s\.slack\.com/(?:services|workflows|triggers)/)(?P<secret>[A-Za-z0-9_/+]+)",
        "detect-secrets SlackDetector",
    ),
    Shape(
        "softlayer key",
        r"p(?<=(?i:api.softlayer.com/soap))/(?i:v3(?:.1)?/)(?P<secret>[a-zA-Z0-9]{64})",
        "detect-secrets SoftlayerDetector",
    ),
    Shape(
        "softlayer key",
        r"P(?<=(?i:api.softlayer.com/soap))/(?i:v3(?:.1)?/)(?P<secret>[a-zA-Z0-9]{64})",
        "detect-secrets SoftlayerDetector",
    ),
    Shape(
        "square oauth secret",
        r"p-(?<=sq0csp-)[0-9A-Za-z\\\-_]{43,}",
        "detect-secrets SquareOAuthDetector",
        behind=5,
    ),
    Shape(
        "telegram bot token",
        r":(?<=[0-9]:)(?<=[0-9]{8}:)[0-9A-Za-z_\-]{35,}",
        "detect-secrets TelegramBotTokenDetector",
        left="[0-9]",
    ),
    Shape("twilio key", r"AC[a-z0-9]{32,}", "detect-secrets TwilioKeyDetector"),
    Shape("twilio key", r"SK[a-z0-9]{32,}", "detect-secrets TwilioKeyDetector"),
)
