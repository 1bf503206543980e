package ui

// SiteTab is one tab of a site's page: a page of its own, at its own
// URL, that works without JavaScript.
type SiteTab string

// The tabs of a site's page, in the order the tab bar shows them.
const (
	// TabOverview is the site's state, address, last deploy, visits
	// sparkline and drop zone: /account/sites/{id}.
	TabOverview SiteTab = ""
	// TabDeploys is the versions, their previews, "Make live" and
	// changes: /account/sites/{id}/deploys.
	TabDeploys SiteTab = "deploys"
	// TabAnalytics is the visits: /account/sites/{id}/analytics.
	TabAnalytics SiteTab = "analytics"
	// TabForms is the submissions, e-mail notifications and webhooks:
	// /account/sites/{id}/forms.
	TabForms SiteTab = "forms"
	// TabDomains is the custom domains: /account/sites/{id}/domains.
	TabDomains SiteTab = "domains"
	// TabSettings is the title, description, icon, SPA, protection and
	// the way to delete the site: /account/sites/{id}/settings.
	TabSettings SiteTab = "settings"
)

// siteTabs are the tabs with their labels, in order.
var siteTabs = []struct {
	Tab   SiteTab
	Label string
}{
	{TabOverview, "Overview"}, {TabDeploys, "Deploys"}, {TabAnalytics, "Analytics"},
	{TabForms, "Forms"}, {TabDomains, "Domains"}, {TabSettings, "Settings"},
}

// tabLabel is the label of tab t.
func tabLabel(t SiteTab) string {
	for _, s := range siteTabs {
		if s.Tab == t {
			return s.Label
		}
	}
	return ""
}

// TabPath is the path of tab t of the site id.
func TabPath(id string, t SiteTab) string {
	if t == TabOverview {
		return sitePath(id, "")
	}
	return sitePath(id, "/"+string(t))
}

// SitePanel is a part of a site tab that shows the messages of its own
// forms (LayoutProps.Panels): a form post answers 303 to
// TabPath(site, Tab)#ID with its message for ID.
type SitePanel struct {
	Tab SiteTab
	ID  string
}

// The panels of the site tabs.
var (
	// PanelVersions is the Deploys tab's versions ("Make live").
	PanelVersions = SitePanel{TabDeploys, "versions"}
	// PanelSubmissions is the Forms tab's submissions (delete).
	PanelSubmissions = SitePanel{TabForms, "submissions"}
	// PanelNotifications is the Forms tab's e-mail notifications.
	PanelNotifications = SitePanel{TabForms, "notifications"}
	// PanelWebhooks is the Forms tab's webhooks (a deleted one).
	PanelWebhooks = SitePanel{TabForms, "webhooks"}
	// PanelWebhookAdd is the Forms tab's "Add a webhook" form.
	PanelWebhookAdd = SitePanel{TabForms, "webhook-add"}
	// PanelDomains is the Domains tab's list (a removed domain).
	PanelDomains = SitePanel{TabDomains, "domains"}
	// PanelDomainAdd is the Domains tab's "Add a domain" form.
	PanelDomainAdd = SitePanel{TabDomains, "domain-add"}
	// PanelSettings is the Settings tab's title, description, icon, SPA.
	PanelSettings = SitePanel{TabSettings, "settings"}
	// PanelProtection is the Settings tab's password and share link.
	PanelProtection = SitePanel{TabSettings, "protection"}
	// PanelControls is the Settings tab's pause, resume and rename.
	PanelControls = SitePanel{TabSettings, "site-controls"}
)

// WebhookPanel is the Forms tab's row of webhook id (its test sends and
// redeliveries, the secret of a new one).
func WebhookPanel(id string) SitePanel {
	return SitePanel{TabForms, "webhook-" + id}
}

// DomainPanel is the Domains tab's row of domain name (its checks).
func DomainPanel(name string) SitePanel {
	return SitePanel{TabDomains, "domain-" + name}
}

// panelIDs are the ids of panels.
func panelIDs(panels ...SitePanel) []string {
	out := make([]string, len(panels))
	for i, p := range panels {
		out[i] = p.ID
	}
	return out
}

// SiteHead is what every tab of a site's page shows: its name, address
// and whether an admin disabled it.
type SiteHead struct {
	ID, Slug, Title, URL string
	// Disabled is true when an admin set the deployment's status to
	// disabled: the site answers 404 and its forms refuse submissions.
	Disabled bool
	// Paused is true when its owner paused it: it answers a "paused"
	// page and its forms refuse submissions (see siteControlsPanel).
	Paused bool
	// TakenDown is the reason an admin took the site down ("" when not):
	// it answers the takedown page (410) and takes no writes until
	// restored. Shown before Disabled and Paused.
	TakenDown string
}
