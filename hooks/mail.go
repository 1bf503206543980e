package hooks

import (
	"context"
	"fmt"
	"net/mail"

	"github.com/a-h/templ"
	"github.com/pocketbase/pocketbase/core"
	"github.com/pocketbase/pocketbase/tools/mailer"

	"sitedrop/sites"
	"sitedrop/ui"
)

// sendLoginCode mails a sign-in code.
func (sd *sitedrop) sendLoginCode(app core.App, to, code string) error {
	p := ui.LoginCodeMailProps{Code: code, Minutes: int(sites.LoginCodeTTL.Minutes()), WebURL: sd.webURL()}
	return sendMail(app, to, ui.LoginCodeMailSubject, ui.LoginCodeMail(p), ui.LoginCodeText(p))
}

// sendNoAccount tells an address without an account, on a server whose
// sign-up is closed, that it cannot sign in.
func (sd *sitedrop) sendNoAccount(app core.App, to string) error {
	p := ui.NoAccountMailProps{WebURL: sd.webURL()}
	return sendMail(app, to, ui.NoAccountMailSubject, ui.NoAccountMail(p), ui.NoAccountText(p))
}

// sendMail sends one message through PocketBase's mail settings (SMTP when
// configured in the dashboard), from the sender set there.
func sendMail(app core.App, to, subject string, html templ.Component, text string) error {
	body, err := ui.RenderString(context.Background(), html)
	if err != nil {
		return fmt.Errorf("render mail %q: %w", subject, err)
	}
	meta := app.Settings().Meta
	msg := &mailer.Message{
		From:    mail.Address{Name: meta.SenderName, Address: meta.SenderAddress},
		To:      []mail.Address{{Address: to}},
		Subject: subject,
		HTML:    body,
		Text:    text,
	}
	if err := app.NewMailClient().Send(msg); err != nil {
		return fmt.Errorf("send mail %q: %w", subject, err)
	}
	return nil
}
