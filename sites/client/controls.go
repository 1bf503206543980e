package client

import (
	"net/url"

	"sitedrop/sites/wire"
)

// Rename gives the deployment id the slug: POST /deploy/{id}/rename. The
// old address redirects to the new one for 30 days.
func (c *Client) Rename(id, slug string) (*wire.Renamed, error) {
	var ans wire.Renamed
	if err := c.Do("POST", "/deploy/"+url.PathEscape(id)+"/rename", wire.RenameRequest{Slug: &slug}, "", &ans); err != nil {
		return nil, err
	}
	return &ans, nil
}

// SetPaused pauses (on) or resumes the deployment id: POST
// /deploy/{id}/pause or /resume.
func (c *Client) SetPaused(id string, on bool) (*wire.PauseState, error) {
	route := "/resume"
	if on {
		route = "/pause"
	}
	var ans wire.PauseState
	if err := c.Do("POST", "/deploy/"+url.PathEscape(id)+route, nil, "", &ans); err != nil {
		return nil, err
	}
	return &ans, nil
}
