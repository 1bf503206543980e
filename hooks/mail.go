package hooks

import (
	"context"
	"fmt"
	"net/http"
	"net/mail"

	"github.com/a-h/templ"
	"github.com/pocketbase/pocketbase/core"
	"github.com/pocketbase/pocketbase/tools/mailer"

	"sitedrop/hooks/internal/apierr"
	"sitedrop/sites/accounts"
	"sitedrop/ui"
)

// sendLoginCode mails a sign-in code.
func (a *signInDesk) sendLoginCode(app core.App, to, code string) error {
	p := ui.LoginCodeMailProps{Code: code, Minutes: int(accounts.LoginCodeTTL.Minutes()), WebURL: a.links.Web()}
	return sendMail(app, to, ui.LoginCodeMailSubject, ui.LoginCodeMail(p), ui.LoginCodeText(p))
}

// msgMailUnavailable answers a sign-in whose e-mail could not be sent.
const msgMailUnavailable = "The sign-in e-mail could not be sent: this server's mail is not working (its admin can fix it in the dashboard's Mail settings)"

// mailFailed reports a sign-in mail that could not be sent: to the
// operator, in the logs and on the serve command's error output (where
// it is seen at once, unlike the dashboard's logs), and to the client as
// a 503, which says that retrying later may work.
func (a *signInDesk) mailFailed(app core.App, err error) error {
	app.Logger().Error("sending a sign-in e-mail failed", "error", err)
	if w := a.cfg.Serve.Logs; w != nil {
		fmt.Fprintf(w, "sitedrop: sending a sign-in e-mail failed (set up SMTP in the dashboard's Mail settings): %v\n", err)
	}
	return apierr.Fail(http.StatusServiceUnavailable, msgMailUnavailable)
}

// sendNoAccount tells an address without an account, on a server whose
// sign-up is closed, that it cannot sign in.
func (a *signInDesk) sendNoAccount(app core.App, to string) error {
	p := ui.NoAccountMailProps{WebURL: a.links.Web()}
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
