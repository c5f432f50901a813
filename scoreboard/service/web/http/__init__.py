"""What every area's routes share about a request and its answer: JSON errors (`errors`) and answers (`encoding`), who
a request is and what they may do (`auth`: a bearer token, or the operator page's session), values named in a request
(`query`), CSV cells (`csv_cells`), CORS (`cross_origin`) and the security headers of every response."""
