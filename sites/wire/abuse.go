package wire

// AbuseReportRequest is the body of POST /report: a report of an abusive
// site by its URL (a site host, a preview or a custom domain), no account
// needed. Reason is one of phishing, malware, spam, illegal, copyright,
// other; Details at most 2,000 characters; URL at most 2,048 bytes; Email
// where the reporter may be answered.
type AbuseReportRequest struct {
	URL     string `json:"url"`
	Reason  string `json:"reason"`
	Details string `json:"details,omitempty"`
	Email   string `json:"email,omitempty"`
}

// AbuseReportAnswer is the answer of POST /report (201): the report is
// stored, open, in the admins' queue.
type AbuseReportAnswer struct {
	Message string `json:"message"`
	ID      string `json:"id"`
}
