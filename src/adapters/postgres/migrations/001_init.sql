-- Users: written by the operator CLI (orders-admin users add); sign-up is out of scope (spec 1).
CREATE TABLE users (
  id            uuid PRIMARY KEY,
  username      text NOT NULL UNIQUE,
  password_hash text NOT NULL,
  created_at    timestamptz NOT NULL DEFAULT now()
);

-- user_id is text: it is the token subject, whatever the credential store issued.
-- The CHECKs are a backstop: the domain validates first (spec 7 rule 2, spec 3.1).
CREATE TABLE orders (
  id         uuid PRIMARY KEY,
  user_id    text NOT NULL,
  item       text NOT NULL,
  quantity   integer NOT NULL CHECK (quantity > 0),
  status     text NOT NULL DEFAULT 'pending' CHECK (status = 'pending'),
  created_at timestamptz NOT NULL
);

-- Serves listByUser: WHERE user_id = $1 ORDER BY created_at DESC, id DESC LIMIT/OFFSET.
CREATE INDEX orders_user_created_idx ON orders (user_id, created_at DESC, id DESC);
