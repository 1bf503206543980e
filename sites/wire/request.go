package wire

import (
	"bytes"
	"encoding/json"
	"errors"
)

// DeployRequest is the JSON body of a deploy (POST /deploy) or an update
// (PUT /deploy/{id}, which takes no Slug: openapi.json's UpdateRequest).
// A pointer tells a field left out (or null) from an empty one: an update
// keeps what a field left out would set. Exactly one of HTML and Files is
// sent. The fields (here and in FileEntry) are in the order of their JSON
// names, the order encoding/json gives a map's keys: a client sends the
// body byte for byte as the CLI's maps did.
type DeployRequest struct {
	// Alias points the alias of that name (alias--slug) at the new
	// version, draft or live. Not for anonymous deploys.
	Alias       *string `json:"alias,omitempty"`
	Description *string `json:"description,omitempty"`
	// Draft saves the new version without making it live: it is served
	// at its preview URL until promoted. Not for anonymous deploys.
	Draft   *bool   `json:"draft,omitempty"`
	Favicon *string `json:"favicon,omitempty"`
	// Files are the site's files.
	Files *[]FileEntry `json:"files,omitempty"`
	// HTML is a one-page site: the HTML of index.html.
	HTML *string `json:"html,omitempty"`
	// IsSPA turns single-page-app serving on or off.
	IsSPA *bool `json:"is_spa,omitempty"`
	// Message describes the version (at most 200 characters).
	Message *string `json:"message,omitempty"`
	// Password and Protect change the site's protection; left out, they
	// keep it.
	Password Password `json:"password,omitzero"`
	Protect  Protect  `json:"protect,omitzero"`
	// Slug is the site's name; generated when left out.
	Slug  *string `json:"slug,omitempty"`
	Title *string `json:"title,omitempty"`
}

// FileEntry is one file of a DeployRequest: its path in the site and its
// content, inline (Content, as text or in Encoding) or named by SHA256 (a
// content the server has: see MissingRequest).
type FileEntry struct {
	// Content is the file's content: text, or base64 when Encoding is
	// "base64". nil is no content, which an entry may only lack when it
	// has SHA256; "" is an empty file.
	Content *string `json:"content,omitempty"`
	// ContentType is the file's MIME type; guessed from the path when
	// left out.
	ContentType string `json:"contentType,omitempty"`
	// Encoding is "" for text content or "base64".
	Encoding string `json:"encoding,omitempty"`
	// Path is the file's path inside the site, e.g. "css/site.css".
	Path string `json:"path"`
	// SHA256 names content already on the server instead of Content.
	SHA256 string `json:"sha256,omitempty"`
}

// The refusals of a Password or a Protect that is not one of its forms.
var (
	ErrPasswordType = errors.New("password must be a string, or null to remove it")
	ErrProtectValue = errors.New(`protect must be true, false, null or "rotate"`)
)

// Password is a deploy's password: left out (the zero value: keep what is
// set), null (Remove) or a string (set it to Value).
type Password struct {
	Set    bool // the field was sent
	Remove bool // null: the site's password is removed
	Value  string
}

// UnmarshalJSON reads a string or null (ErrPasswordType otherwise).
func (p *Password) UnmarshalJSON(b []byte) error {
	*p = Password{Set: true}
	if string(b) == "null" {
		p.Remove = true
		return nil
	}
	if err := json.Unmarshal(b, &p.Value); err != nil {
		return ErrPasswordType
	}
	return nil
}

// MarshalJSON writes null for Remove, else the string.
func (p Password) MarshalJSON() ([]byte, error) {
	if p.Remove {
		return []byte("null"), nil
	}
	return json.Marshal(p.Value)
}

// JSONTypes are the JSON types a Password is sent as.
func (Password) JSONTypes() []string { return []string{"string", "null"} }

// Protect is a deploy's protect: left out (the zero value: keep what is
// set), true (On: visitors enter with the share link), false or null
// (off), or "rotate" (On and Rotate: a new share link).
type Protect struct {
	Set, On, Rotate bool
}

// UnmarshalJSON reads true, false, null or "rotate" (ErrProtectValue
// otherwise).
func (p *Protect) UnmarshalJSON(b []byte) error {
	*p = Protect{Set: true}
	switch string(bytes.TrimSpace(b)) {
	case "true":
		p.On = true
	case "false", "null":
	case `"rotate"`:
		p.On, p.Rotate = true, true
	default:
		return ErrProtectValue
	}
	return nil
}

// MarshalJSON writes "rotate", true or false.
func (p Protect) MarshalJSON() ([]byte, error) {
	switch {
	case p.Rotate:
		return []byte(`"rotate"`), nil
	case p.On:
		return []byte("true"), nil
	}
	return []byte("false"), nil
}

// JSONTypes are the JSON types a Protect is sent as.
func (Protect) JSONTypes() []string { return []string{"boolean", "null", "string"} }
